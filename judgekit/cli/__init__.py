"""The ``judgekit`` command line: thin commands over the study, judging, reporting and sharing."""
