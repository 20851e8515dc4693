"""Embedded data sets (read them with :func:`bayes_tee.datasets.load`)."""
