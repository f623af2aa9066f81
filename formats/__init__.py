"""File formats Spanlight reads and writes: one module per format behind one interface, and no database.

Every reader turns bytes into a :class:`~formats.records.Bundle` and reports each flaw as a
:class:`~formats.problems.Problem` (see :mod:`formats.base`); writers turn a bundle back into bytes.
``formats.registry`` lists the formats, guesses a file's format and runs a reader safely;
``formats.preview`` shows what an import would bring. Writing a bundle to the store, and reading one
back, is the database's side (``db.importer``, ``db.exporter``, ``db.transfer``).

Adding a format: a file of one record per item is a subclass of
:class:`~formats.record_formats.BenchmarkRecordsFormat` (hook ``read_item``: one record -> an item and
its gold annotations) or :class:`~formats.record_formats.PredictionRecordsFormat` (hooks
``record_fields`` and ``annotate``: one record -> the detector's annotations of a stored item); the
template decodes the file, loads the records, collects every problem and builds the bundle. Any other
shape subclasses :class:`~formats.base.Format` and writes ``read`` itself with the shared helpers
(``text``, ``json_documents``, ``fields``, ``ids``, ``record_loops``, ``bundles``). Then list the
module in ``formats.registry``, and say in ``holds`` which labels a written file keeps
(:mod:`formats.export_check` refuses an export that would keep none of them).
"""
