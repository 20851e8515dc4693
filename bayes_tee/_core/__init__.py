"""Shared machinery every topic uses: errors and warnings, priors, diagnostics, interval
summaries, the draws tree and the one sampler entry point with its compiled-model cache.

Nothing here knows about a topic; everything above imports from here.
"""
