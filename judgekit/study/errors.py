"""A command's own failure: a run that did not do its job (exit code 1, one line)."""


class RunFailed(RuntimeError):
    """The run did not do its job (outputs may exist); the message is one line."""
