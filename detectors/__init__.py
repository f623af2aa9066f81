"""Running a detector live: the papers' prompting strategies against any OpenAI-compatible endpoint.

A *strategy* (one module per paper: :mod:`.mhalo`, :mod:`.alignbench`, :mod:`.mhalubench`,
:mod:`.trihe`) holds its prompts and the parser of its answers together, and versions the pair by a
hash; the parsers are the file formats' own (``formats.mhalo_outputs``, ``formats.word_index``,
``formats.alignbench_scores`` …), so an answer read live and the same answer read from a file give the
same annotations. :mod:`.runner` makes the calls (bounded threads, :mod:`.client` with retries,
:mod:`.cache` of responses, :mod:`.ledger` of tokens and cost) and hands each item's
:class:`~formats.records.Annotations` to a store in batches; the store (``db.detector_runs``) writes
them through the same importer as a file. Nothing here touches the database or the UI.
"""
