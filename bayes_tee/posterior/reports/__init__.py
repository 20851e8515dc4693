"""What a fit says to a reader: the plain-text summary, the paragraph for the paper and the
self-contained HTML report, for a fit of one system (:mod:`~.single`) and for a comparison of
systems (:mod:`~.systems`), over the shared text and HTML pieces of :mod:`~.parts`. Only the
facade (:mod:`bayes_tee.posterior.facade`) imports this room.
"""

from . import single, systems

__all__ = ["single", "systems"]
