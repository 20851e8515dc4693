"""Data -> :class:`~bayes_tee.design.design.Design`: what was measured and how it is modelled.

One way in, :func:`~bayes_tee.design.build.build_design` (a frame, parquet or dask data, with
roles or an lme4-style formula), over the modules that do the work: :mod:`~.terms` (the
model's terms), :mod:`~.formula` (the formula parser and writer), :mod:`~.design` (the
``Design`` type and its roles), :mod:`~.roles` (column roles checked, cells and their
statistics), :mod:`~.from_formula` (any design by formula),
:mod:`~.out_of_core` (per-cell statistics with dask), :mod:`~.coding` (values to levels, rows
to cells) and :mod:`~.losses` (dropped rows, counted). No module here creates a PyMC object.
"""
