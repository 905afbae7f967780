"""The fact vocabulary of the enrichment: kinds, views, the brief's sections, facts on demand.

``registry`` defines every fact kind once; ``brief`` renders the facts of an
enrichment index for the case brief within a character budget; ``query``
answers a paged facts query in the same compact views; ``index`` checks an
index against ``enrichment-index-v1``.
"""
