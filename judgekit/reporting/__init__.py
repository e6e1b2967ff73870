"""The report of a study: its analyses, the notebooks that present them, the HTML page."""
