"""The study folder: its layout, what it records, its items, rubrics, labels and parameters."""
