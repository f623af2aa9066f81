"""Spanlight on the command line: the same store and rules as the app, without a browser.

    python cli.py init  [--db URL]            migrate, and load the demo if the store is empty
    python cli.py demo  [--db URL] [--json]   (re)create the synthetic demo dataset
    python cli.py stats [--db URL] [--json]   datasets with their counts
    python cli.py import --format F [--dataset NAME] [--images DIR|ZIP] FILE…      benchmark files
                        [--faithscore-polarity data|readme]
    python cli.py import --map MAPPING.json [--dataset NAME] FILE|FOLDER      any table, by a field mapping
    python cli.py export-mapping --dataset NAME --out FILE      the mapping a dataset was imported with
    python cli.py import-predictions --dataset NAME --detector NAME --format F FILE  a detector run
    python cli.py export --dataset NAME --format F --out FILE [--label-set NAME…]
    python cli.py imports [--json]              recent imports, newest first, with their log ids
    python cli.py undo-import LOG_ID [--json]   put back what an import replaced
    python cli.py copy-store --to URL [--db URL] [--json]   every row of the store into an empty one
    python cli.py evaluate --dataset NAME [--json] [--resamples N]   the papers' tables on a dataset
    python cli.py run-detector --dataset NAME --detector NAME --base-url URL --model MODEL --strategy S
                  [--api-key-env VAR] [--concurrency N] [--limit N] [--items ID,…] [--samples K] …
                                                a detector run live against a chat-completions endpoint
    python cli.py assign --dataset NAME --task TASK --annotators A,B,C --k 2 [--json]   split the work
    python cli.py progress --dataset NAME --task TASK [--json]   each annotator's assigned, done, skipped
    python cli.py promote --dataset NAME --task TASK --rule majority|unanimity|alignbench
                          [--threshold 0.5] [--dry-run] [--replace] [--json]   agreed items' labels into gold
    python cli.py user add NAME --role ROLE [--email E]   a team-mode account (password: stdin or prompt)
    python cli.py user list | set-role NAME ROLE | disable NAME | enable NAME | password NAME
    python cli.py gold-locks list --dataset NAME [--annotator NAME] [--json]   gold shown to annotators
    python cli.py gold-locks lift --dataset NAME --annotator NAME [--item ID]… [--json]   lift their locks

``--db`` defaults to ``DATABASE_URL``, then to the embedded SQLite file (see ``db/config.py``).
Every command exits non-zero on failure and prints the reason: 1 when the input was refused (with a
report naming file, record, field and reason), 2 for a usage error. An import that would remove or
change stored annotations is refused (exit 1, with counts of what would change) unless ``--replace``,
and so is a promotion that would replace gold no promotion wrote, such as gold imported with the dataset
(naming the labels and items).

The ``user`` and ``gold-locks lift`` commands act as the operator (``db.access.OPERATOR``): whoever can run them holds the store
itself. A password is never an argument (it would stay in the shell's history and the process list):
it is read from standard input when that is piped, else asked for twice without echo.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from render.progress_line import ProgressLine
from render.terminal_text import VisibleControls

if TYPE_CHECKING:  # the store and the formats are imported only by the commands that use them
    from sqlalchemy import Engine

    from db.repositories.adjudication import RuleSummary
    from formats.base import Kind

Command = Callable[[argparse.Namespace], int]


def _engine(args: argparse.Namespace) -> Engine:
    from db.engine import make_engine
    from db.migrate import upgrade

    engine = make_engine(args.db)
    upgrade(engine)
    return engine


def _emit(args: argparse.Namespace, payload: Any, text: str) -> None:
    print(json.dumps(payload, indent=2, ensure_ascii=False) if args.json else text)


def cmd_init(args: argparse.Namespace) -> int:
    from db.access import OPERATOR
    from db.config import redact, resolve_url
    from demo.load import ensure_demo

    engine = _engine(args)
    loaded = ensure_demo(engine, actor=OPERATOR)
    _emit(
        args,
        {"database": redact(resolve_url(args.db)), "demo_loaded": loaded},
        f"Store ready at {redact(resolve_url(args.db))}" + ("; demo dataset loaded." if loaded else "."),
    )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from db.access import OPERATOR
    from demo.load import load_demo

    engine = _engine(args)
    result = load_demo(engine, actor=OPERATOR)
    _emit(
        args,
        result.to_dict(),
        f"Demo dataset {result.dataset!r}: {result.items_created} items, "
        + ", ".join(f"{n} {table}" for table, n in sorted(result.rows.items())),
    )
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from db.repositories.stats import dataset_stats

    rows = dataset_stats(_engine(args))
    lines = [f"{'dataset':40} {'items':>7} {'spans':>7} {'sent.lab':>8} {'sets':>5}"]
    lines += [
        f"{str(r['name'])[:40]:40} {r['items']:>7} {r['spans']:>7} {r['sentence_labels']:>8} {r['label_sets']:>5}"
        for r in rows
    ]
    _emit(args, {"datasets": rows}, "\n".join(lines) if rows else "No datasets yet.")
    return 0


USAGE = 2


def _format_or_usage(name: str | None, kind: Kind) -> str | None:
    """None when ``name`` is a known format of ``kind`` (or not given), else the message to print."""
    if name is None:
        return None
    from formats.registry import FORMATS, formats

    fmt = FORMATS.get(name)  # that format's module alone: the others are loaded only to list them
    if fmt is None:
        known = sorted(f.name for f in formats(kind))
        return f"--format {name!r} is not a known format; choose one of: {', '.join(known)}"
    if fmt.kind != kind:
        other = "import-predictions" if kind == "benchmark" else "import"
        return f"--format {name!r} is a {fmt.kind} format: use {other}"
    return None


def _input_files(paths: Sequence[str]) -> list[tuple[str, Path]] | str:
    """Each named file with its path, or the message to print: one is missing or over the set cap."""
    from db.import_folder import size_problem

    found = []
    for name in paths:
        path = Path(name)
        if not path.is_file():
            return f"no such file: {name}"
        too_large = size_problem(path.stat().st_size, set_only=True)
        if too_large:
            return f"{name}: {too_large}"
        found.append((name, path))
    return found


def _read_inputs(paths: Sequence[str]) -> list[tuple[str, bytes]] | str:
    found = _input_files(paths)
    return found if isinstance(found, str) else [(name, path.read_bytes()) for name, path in found]


def _report(args: argparse.Namespace, outcomes: list[Any]) -> int:
    from formats.problems import whole_file_first

    ok = all(o.ok for o in outcomes)
    if args.json:
        print(json.dumps({"ok": ok, "files": [o.to_dict() for o in outcomes]}, indent=2, ensure_ascii=False))
        return 0 if ok else 1
    for outcome in outcomes:
        print(outcome.summary())
        for problem in whole_file_first(outcome.problems):  # as the Import page lists them
            print(f"  {problem.severity}: {problem}")
    return 0 if ok else 1


def _read_tables(paths: Sequence[str]) -> list[Any] | str:
    """Each path as a table source (a file, or a folder of Parquet shards), or the message to print."""
    from db.import_folder import dataset_folder_problem
    from formats.dataset_folders import open_dataset_folder
    from formats.mapping import open_file

    found: list[Any] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            problem = dataset_folder_problem(path)
            if problem:
                return f"{name}: {problem}"
            found.append(open_dataset_folder(path).source)
            continue
        inputs = _read_inputs([name])
        if isinstance(inputs, str):
            return inputs
        found.append(open_file(inputs[0][1], name))
    return found


def cmd_import_mapped(args: argparse.Namespace) -> int:
    """``import --map MAPPING.json FILE|FOLDER``, or a dataset folder without a mapping (recognised)."""
    from db.access import OPERATOR
    from db.transfer import import_table
    from formats.base import ReadOptions
    from formats.mapping import ImportMapping, MappingError

    mapping = None
    usage = "--format cannot be combined with --map or a dataset folder" if args.format else None
    if args.map and not usage:
        try:
            mapping = ImportMapping.from_json(Path(args.map).read_bytes())
        except OSError as error:
            usage = f"--map {args.map}: {error.strerror or error}"
        except MappingError as error:
            usage = f"--map {args.map}: {error}"
    sources = _read_tables(args.files) if not usage else []
    if usage or isinstance(sources, str):
        print(f"error: {usage or sources}", file=sys.stderr)
        return USAGE
    engine = _engine(args)
    outcomes = [
        _with_progress(
            partial(
                import_table,
                engine,
                source,
                actor=OPERATOR,
                mapping=mapping,
                options=ReadOptions(dataset=args.dataset, subset=args.subset),
                allow_skip=args.allow_skip,
                image_root=args.images or None,  # resolved by the import, which reports it as typed
                replace_existing=args.replace,
            )
        )
        for source in sources
    ]
    return _report(args, outcomes)


def cmd_import(args: argparse.Namespace) -> int:
    from db.access import OPERATOR
    from db.transfer import import_path
    from formats.base import ReadOptions
    from formats.faithscore import POLARITIES

    usage = _format_or_usage(args.format, "benchmark")
    if args.faithscore_polarity not in POLARITIES:
        usage = f"--faithscore-polarity {args.faithscore_polarity!r} is not one of {', '.join(POLARITIES)}"
    if not usage and (args.map or any(Path(name).is_dir() for name in args.files)):
        if args.images and not Path(args.images).is_dir():
            print("error: with --map or a folder, --images must be an image folder", file=sys.stderr)
            return USAGE
        return cmd_import_mapped(args)
    inputs = _input_files(args.files)
    image_root, image_zip = None, None
    if args.images:
        images = Path(args.images)
        if images.is_dir():
            image_root = args.images  # resolved by the import, which reports it as typed
        elif images.is_file() and images.suffix.lower() == ".zip":
            zipped = _read_inputs([args.images])
            usage = usage or (zipped if isinstance(zipped, str) else None)
            image_zip = zipped[0][1] if not isinstance(zipped, str) else None
        else:
            usage = usage or f"--images must be a folder or a .zip file: {args.images}"
    if usage or isinstance(inputs, str):
        print(f"error: {usage or inputs}", file=sys.stderr)
        return USAGE
    engine = _engine(args)
    outcomes = [
        _with_progress(
            partial(
                import_path,
                engine,
                path,
                actor=OPERATOR,
                source=name,
                format_name=args.format,
                options=ReadOptions(
                    dataset=args.dataset, subset=args.subset, faithscore_polarity=args.faithscore_polarity
                ),
                allow_skip=args.allow_skip,
                image_root=image_root,
                image_zip=image_zip,
                replace_existing=args.replace,
            )
        )
        for name, path in inputs
    ]
    return _report(args, outcomes)


def cmd_import_predictions(args: argparse.Namespace) -> int:
    from db.access import OPERATOR
    from db.transfer import import_predictions
    from formats.base import ReadOptions

    usage = _format_or_usage(args.format, "predictions")
    inputs = _read_inputs([args.file])
    if usage or isinstance(inputs, str):
        print(f"error: {usage or inputs}", file=sys.stderr)
        return USAGE
    ((name, data),) = inputs
    engine = _engine(args)
    outcome = _with_progress(
        partial(
            import_predictions,
            engine,
            data,
            actor=OPERATOR,
            source=name,
            dataset=args.dataset,
            detector=args.detector,
            format_name=args.format,
            options=ReadOptions(
                detector_version=args.detector_version,
                prompt_strategy=args.prompt_strategy,
                tag=args.tag,
                label_set_kind=args.label_set_kind,
            ),
            allow_skip=args.allow_skip,
            replace_existing=args.replace,
        )
    )
    return _report(args, [outcome])


def cmd_export(args: argparse.Namespace) -> int:
    from db.access import OPERATOR
    from db.export_files import export_to
    from db.exporter import UnknownDataset
    from db.repositories.datasets import get_dataset
    from db.repositories.items import count_items
    from formats.base import FormatError
    from formats.registry import FORMATS

    if args.format not in FORMATS:
        print(
            f"error: --format {args.format!r} is not a known format: {', '.join(sorted(FORMATS))}",
            file=sys.stderr,
        )
        return USAGE
    out = Path(args.out)
    left_out: list[str] = []
    engine = _engine(args)
    dataset = get_dataset(engine, args.dataset)
    total = count_items(engine, dataset.id) if dataset is not None else 0

    def written(progress: Callable[[float, str], None]) -> int:
        def items_done(done: int) -> None:
            progress(done / total if total else 0.0, f"Writing items ({done:,} of {total:,} written)…")

        return export_to(
            engine,
            args.dataset,
            args.format,
            out,
            actor=OPERATOR,
            label_sets=args.label_set or None,
            left_out=left_out,
            items_done=items_done,
        )

    try:
        size = _with_progress(written)
    except (UnknownDataset, FormatError) as error:
        print(f"error: {error.args[0] if error.args else error}", file=sys.stderr)
        return 1
    _emit(
        args,
        {
            "dataset": args.dataset,
            "format": args.format,
            "out": str(out),
            "bytes": size,
            "left_out": left_out,
        },
        f"Wrote {args.dataset!r} as {args.format} to {out} ({size:,} bytes)"
        + "".join(f"\nnote: {line}" for line in left_out),
    )
    return 0


def cmd_export_mapping(args: argparse.Namespace) -> int:
    from db.repositories.datasets import get_dataset, import_mapping
    from formats.mapping import ImportMapping

    engine = _engine(args)
    saved = import_mapping(engine, args.dataset)
    if saved is None:
        known = get_dataset(engine, args.dataset) is not None
        reason = "was not imported with a field mapping" if known else "does not exist"
        print(f"error: the dataset {args.dataset!r} {reason}", file=sys.stderr)
        return 1
    data = ImportMapping.from_dict(saved).to_json()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    _emit(
        args,
        {"dataset": args.dataset, "out": str(out), "mapping": saved},
        f"Wrote the field mapping of {args.dataset!r} to {out} (reuse it with: import --map {out})",
    )
    return 0


def _export_mapping_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="a dataset imported with --map")
    parser.add_argument("--out", required=True, help="the JSON file to write the mapping to")


def cmd_copy_store(args: argparse.Namespace) -> int:
    """Copy the whole store (``--db``) into an empty one (``--to``): :mod:`db.store_copy`."""
    from db.engine import make_engine
    from db.store_copy import CopyRefused, copy_store

    source = _engine(args)
    target = make_engine(args.to)
    shown = target.url.render_as_string(hide_password=True)

    def copied(progress: Callable[[float, str], None]) -> Any:
        def rows_done(table: str, done: int, in_all: int) -> None:
            progress(done / in_all if in_all else 0.0, f"Copying rows ({done:,} of {in_all:,}; {table})…")

        return copy_store(source, target, progress=rows_done)

    try:
        result = _with_progress(copied)
    except CopyRefused as refused:
        if args.json:
            payload = {
                "ok": False,
                "error": refused.reason,
                "problems": refused.problems,
                "more": refused.more,
            }
            print(json.dumps(payload, indent=2, ensure_ascii=False))
        else:
            print(f"error: {refused}", file=sys.stderr)
        return 1
    lines = [f"Copied {result.total:,} rows into {shown}:"]
    lines += [f"  {table:22} {n:>10,}" for table, n in result.rows.items() if n]
    lines.append("Login sessions are not copied: everyone logs in again on the new store.")
    if result.image_roots:
        lines.append("Image folders are not copied; the app serving the new store must reach them at:")
        lines += [f"  {root}" for root in result.image_roots]
    _emit(
        args,
        {"ok": True, "target": shown, "rows": result.rows, "image_roots": result.image_roots},
        "\n".join(lines),
    )
    return 0


def cmd_imports(args: argparse.Namespace) -> int:
    from db.import_undo import recent_imports

    entries = recent_imports(_engine(args), limit=args.limit)
    lines = [
        f"{e.log_id:>6}  {e.at:%Y-%m-%d %H:%M}  {e.dataset or '(deleted)'}  {e.source}  "
        + ("undone" if e.undone else "undoable" if e.undoable else "nothing to undo")
        for e in entries
    ]
    _emit(args, {"imports": [e.to_dict() for e in entries]}, "\n".join(lines) or "No imports yet.")
    return 0


def cmd_undo_import(args: argparse.Namespace) -> int:
    from db.access import OPERATOR
    from db.import_undo import UndoRefused, undo_import

    try:
        result = undo_import(_engine(args), args.log_id, actor=OPERATOR)
    except UndoRefused as refused:
        if args.json:
            print(json.dumps({"ok": False, "error": str(refused)}, indent=2, ensure_ascii=False))
        else:
            print(f"error: {refused}", file=sys.stderr)
        return 1
    _emit(
        args,
        {"ok": True, **result.to_dict()},
        f"Undid import {result.undid} on {result.dataset!r} (log id {result.log_id}): {result.summary()}",
    )
    return 0


def _imports_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--limit", type=int, default=20, help="how many imports to list")


def _undo_import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log_id", type=int, metavar="LOG_ID", help="the import's log id (see: imports)")


def _replace_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--replace",
        action="store_true",
        help="replace existing annotations the file changes or removes (logged, undoable)",
    )


def _import_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="benchmark files, or dataset folders of Parquet shards (each imported all or nothing)",
    )
    parser.add_argument("--format", help="the files' format (default: recognised from the content)")
    parser.add_argument(
        "--map",
        metavar="MAPPING.json",
        help="read any CSV/JSON/JSONL/Parquet file or Parquet folder by this field mapping "
        "(saved with the dataset; get it back with export-mapping)",
    )
    parser.add_argument("--dataset", help="dataset to import into (default: the file name)")
    parser.add_argument("--subset", help="subset name for the items (default: from the file)")
    parser.add_argument("--images", help="image folder, or a .zip of images to unpack for the dataset")
    parser.add_argument("--allow-skip", action="store_true", help="import the sound records, report the rest")
    parser.add_argument(
        "--faithscore-polarity",
        default="data",
        help="FaithScore files: 'data' (default; 1 = faithful fact / descriptive sub-sentence, as the "
        "annotations use it) or 'readme' (1 = hallucinated / analytical, as its README states)",
    )
    _replace_argument(parser)


def _import_predictions_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the detector's outputs")
    parser.add_argument("--dataset", required=True, help="the dataset the outputs are about")
    parser.add_argument("--detector", required=True, help="name of this detector run (a new label set)")
    parser.add_argument("--format", help="the file's format (default: recognised from the content)")
    parser.add_argument("--detector-version", help="version of the detector, shown with its name")
    parser.add_argument("--prompt-strategy", help="e.g. vanilla or analyze-then-judge")
    parser.add_argument("--tag", help="span tag name in tagged outputs (default: found in the outputs)")
    parser.add_argument(
        "--label-set-kind",
        choices=("detector", "gold", "human"),
        default="detector",
        help="whose ratings a ratings file holds: a judge's run (default), gold, or an annotator's",
    )
    parser.add_argument("--allow-skip", action="store_true", help="import the sound records, report the rest")
    _replace_argument(parser)


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--format", required=True, help="e.g. canonical, mhalo, alignbench, label-studio")
    parser.add_argument(
        "--out", required=True, help="file to write (.csv/.parquet choose AlignBench's encoding)"
    )
    parser.add_argument(
        "--label-set",
        action="append",
        help="label set to include, by name or kind:name (repeat; default all)",
    )


def cmd_evaluate(args: argparse.Namespace) -> int:
    from analysis.reports import evaluate
    from db.repositories.datasets import get_dataset
    from render.report_text import reports_payload, reports_text

    engine = _engine(args)
    dataset = get_dataset(engine, args.dataset)
    if dataset is None:
        print(f"error: there is no dataset named {args.dataset!r}", file=sys.stderr)
        return 1
    reports = evaluate(engine, dataset.id, n_resamples=args.resamples)
    _emit(args, reports_payload(dataset.name, reports), reports_text(reports))
    return 0


def _evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="the dataset to measure")
    parser.add_argument(
        "--resamples", type=int, default=1000, help="bootstrap resamples of the intervals (0: none)"
    )


def cmd_run_detector(args: argparse.Namespace) -> int:
    import os

    from db.access import OPERATOR
    from db.detector_runs import default_prices, run_live
    from detectors.client import RetryPolicy, base_url_problem, key_variable_problem
    from detectors.ledger import Prices, cost_text
    from detectors.outcome import refused_text, result_text
    from detectors.runner import RunBroken, RunRefused, RunSpec
    from detectors.strategies import STRATEGIES

    usage = [] if args.strategy in STRATEGIES else [f"--strategy must be one of: {', '.join(STRATEGIES)}"]
    usage += [p for p in [base_url_problem(args.base_url)] if p]
    named = key_variable_problem(args.api_key_env or "")
    api_key = os.environ.get(args.api_key_env) if args.api_key_env and named is None else None
    if named is not None:
        usage.append(f"--api-key-env: {named}")
    elif args.api_key_env and not api_key:
        usage.append(f"--api-key-env: the environment variable {args.api_key_env!r} is not set")
    try:
        prices = default_prices()
    except ValueError as bad:
        prices, usage = Prices(), [*usage, str(bad)]
    spec = RunSpec(
        dataset=args.dataset,
        detector=args.detector,
        strategy=args.strategy,
        base_url=args.base_url,
        model=args.model,
        temperature=args.temperature,
        max_tokens=args.max_tokens or None,
        samples=args.samples,
        concurrency=args.concurrency,
        limit=args.limit,
        items=tuple(i.strip() for i in (args.items or "").split(",") if i.strip()),
        budget_tokens=args.budget_tokens,
        prices=Prices(
            prices.input_per_1k if args.price_in is None else args.price_in,
            prices.output_per_1k if args.price_out is None else args.price_out,
        ),
        images=not args.text_only,
        timeout_s=args.timeout,
        retry=RetryPolicy(attempts=args.attempts),
    )
    usage += spec.problems() + ([] if args.attempts >= 1 else ["--attempts must be at least 1"])
    if usage:
        print(f"error: {'; '.join(usage)}", file=sys.stderr)
        return USAGE
    engine = _engine(args)
    cancel = threading.Event()
    line = ProgressLine(sys.stderr)

    def run() -> Any:
        try:
            return run_live(
                engine, spec, OPERATOR, api_key=api_key, cancel=cancel, progress=_detector_progress(line)
            )
        finally:
            line.end()  # its last state stays above the summary

    try:
        result = _until_interrupted(run, cancel, line)
    except RunRefused as refused:
        if args.json:
            print(
                json.dumps(
                    {"ok": False, "status": "refused", "error": str(refused)}, indent=2, ensure_ascii=False
                )
            )
        else:
            print(f"error: {refused_text(str(refused))}", file=sys.stderr)
        return 1
    except RunBroken as broken:
        reason = f"the run broke off: {broken}; what arrived before is kept (run again to resume)"
        if args.json:
            print(
                json.dumps({"ok": False, "status": "broken", "error": reason}, indent=2, ensure_ascii=False)
            )
        else:
            print(f"error: {reason}", file=sys.stderr)
        return 1
    ledger = result.ledger
    lines = [
        f"Detector {spec.detector!r} on {spec.dataset!r} ({spec.strategy} #{result.prompt_hash}, {spec.model}): "
        + result_text(result),
        f"Calls {ledger['calls']} ({ledger['cached_calls']} from the cache, {ledger['retries']} retries, "
        f"{ledger['failed_calls']} failed); tokens {ledger['prompt_tokens']:,} in, "
        f"{ledger['completion_tokens']:,} out; cost {cost_text(ledger)}",
    ]
    if result.judge_bias:
        lines.append(f"Judge bias: {result.judge_bias}")
    if result.not_judged:
        lines.append(f"Not judged ({len(result.not_judged)} items): {next(iter(result.not_judged.values()))}")
    lines += [f"Failed {ext}: {reason}" for ext, reason in result.failed.items()]
    if result.truncated:
        lines.append(
            f"Cut at max tokens (finish_reason 'length'): {ledger['truncated_answers']} answer(s) in "
            f"{len(result.truncated)} item(s); a cut answer may read as no hallucination: raise --max-tokens "
            "and run under a new --detector name"
        )
        lines += [f"Cut {ext}: {', '.join(units)}" for ext, units in result.truncated.items()]
    _emit(args, result.to_dict(), "\n".join(lines))
    return 0 if result.ok else 1


def _until_interrupted(work: Callable[[], Any], cancel: threading.Event, line: ProgressLine) -> Any:
    """``work()`` in a thread of its own; Ctrl-C cancels it, and it ends as a cancelled run does: what
    arrived is stored, the label set says where it stands, the summary is printed. (Ctrl-C ended the
    process with a traceback and left the run marked running.) A second Ctrl-C stops at once. The
    word that it is cancelling goes on a line of its own above the run's progress ``line``."""
    done: list[Any] = []
    finished = threading.Event()  # not Thread.join: a join cut short by Ctrl-C can return at once later

    def run() -> None:
        try:
            done.append(work())
        except BaseException as error:  # noqa: BLE001 - raised again in the main thread
            done.append(error)
        finally:
            finished.set()

    threading.Thread(target=run, name="detector-run", daemon=True).start()
    try:
        while not finished.wait(0.5):
            pass
    except KeyboardInterrupt:
        cancel.set()
        line.say("cancelling: the calls in flight end, what arrived is kept (Ctrl-C again to stop at once)")
        finished.wait()
    if isinstance(done[0], BaseException):
        raise done[0]
    return done[0]


def _detector_progress(line: ProgressLine) -> Callable[[Any], None]:
    """A detector run's progress on the terminal's progress line; the last state is always shown."""

    def shown(progress: Any) -> None:
        eta = "—" if progress.eta_s is None else f"{progress.eta_s:,.0f} s"
        tokens = progress.ledger["prompt_tokens"] + progress.ledger["completion_tokens"]
        line.show(
            f"{progress.finished}/{progress.total} items · {progress.rate:.1f}/s · ETA {eta} · "
            f"{progress.ledger['calls']} calls · {tokens:,} tokens",
            new_stage=progress.finished >= progress.total,
        )

    return shown


Done = TypeVar("Done")


def _with_progress(work: Callable[..., Done]) -> Done:
    """``work(progress=…)`` with each progress message on the terminal's progress line, followed by the
    time since the work began; the line is erased when it ends, before its report is printed. (An
    import of a million rows said nothing for half a minute.) A message of a new stage (other words
    before its parenthesis) is shown at once."""
    line = ProgressLine(sys.stderr)
    started = time.monotonic()
    stage = [""]

    def progress(fraction: float, message: str) -> None:
        if fraction >= 1.0:  # the summary: the report says it
            return
        words = message.partition("(")[0]
        line.show(f"{message} · {time.monotonic() - started:,.0f} s", new_stage=words != stage[0])
        stage[0] = words

    try:
        return work(progress=progress)
    finally:
        line.clear()


def _run_detector_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="the dataset to judge")
    parser.add_argument("--detector", required=True, help="name of the run (its detector label set)")
    parser.add_argument(
        "--base-url", required=True, help="OpenAI-compatible endpoint, e.g. http://host:8000/v1"
    )
    parser.add_argument("--model", required=True, help="the model name the endpoint serves")
    parser.add_argument("--strategy", required=True, help="prompting strategy (e.g. mhalo-vanilla)")
    parser.add_argument("--api-key-env", help="environment variable holding the API key (never stored)")
    parser.add_argument("--concurrency", type=int, default=4, help="calls in flight at once")
    parser.add_argument("--limit", type=int, help="judge at most this many items not yet judged")
    parser.add_argument("--items", help="comma-separated item ids to judge (default: all)")
    parser.add_argument("--max-tokens", type=int, default=1024, help="answer length limit per call (0: none)")
    parser.add_argument("--budget-tokens", type=int, help="start no call once this many tokens are spent")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--samples", type=int, default=1, help="self-ensemble: answers per call, combined")
    parser.add_argument(
        "--price-in", type=float, help="price per 1K input tokens (default SPANLIGHT_PRICE_IN)"
    )
    parser.add_argument(
        "--price-out", type=float, help="price per 1K output tokens (default SPANLIGHT_PRICE_OUT)"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for an answer")
    parser.add_argument("--attempts", type=int, default=5, help="tries per call (retries + 1)")
    parser.add_argument("--text-only", action="store_true", help="send no images (a text-only model)")


def _refused(args: argparse.Namespace, reason: str) -> int:
    if args.json:
        print(json.dumps({"ok": False, "error": reason}, indent=2, ensure_ascii=False))
    else:
        print(f"error: {reason}", file=sys.stderr)
    return 1


def cmd_assign(args: argparse.Namespace) -> int:
    from db.access import OPERATOR, Forbidden
    from db.repositories.annotators import find_annotator
    from db.repositories.assignments import AssignmentError, assign
    from db.repositories.datasets import get_dataset

    names = [name.strip() for name in args.annotators.split(",") if name.strip()]
    if not names:
        print("error: --annotators names at least one annotator (a,b,c)", file=sys.stderr)
        return USAGE
    engine = _engine(args)
    dataset = get_dataset(engine, args.dataset)
    if dataset is None:
        return _refused(args, f"there is no dataset named {args.dataset!r}")
    ids: dict[int, str] = {}
    for name in names:
        found = find_annotator(engine, name)
        if found is None:
            return _refused(args, f"there is no user named {name!r}")
        ids[found.id] = found.name
    try:
        counts = assign(engine, dataset.id, args.task, list(ids), args.k, actor=OPERATOR)
    except (AssignmentError, Forbidden) as refused:
        return _refused(args, str(refused))
    loads = {ids[annotator_id]: load for annotator_id, load in counts.loads.items()}
    _emit(
        args,
        {
            "ok": True,
            "dataset": dataset.name,
            "task": args.task,
            "k": args.k,
            "items": counts.items,
            "added": counts.added,
            "kept": counts.kept,
            "loads": loads,
        },
        f"{dataset.name!r}, {args.task}: {counts.items} item(s), {args.k} annotator(s) each; "
        f"{counts.added} assignment(s) added, {counts.kept} kept.\n"
        + "\n".join(f"  {name!r}: {load} item(s)" for name, load in loads.items()),
    )
    return 0


def cmd_progress(args: argparse.Namespace) -> int:
    from db.repositories.assignments import progress_by_annotator
    from db.repositories.datasets import get_dataset
    from db.repositories.queue import queue_size

    engine = _engine(args)
    dataset = get_dataset(engine, args.dataset)
    if dataset is None:
        return _refused(args, f"there is no dataset named {args.dataset!r}")
    rows = progress_by_annotator(engine, dataset.id, args.task)
    n_items = queue_size(engine, dataset.id, args.task)
    lines = [f"{dataset.name!r}, {args.task}: {n_items} item(s) in the queue"]
    # Locked: not finished, their gold shown to the annotator, who can no longer finish them; not remaining.
    lines += [f"{'annotator':30} {'assigned':>8} {'done':>8} {'skipped':>8} {'locked':>8} {'remaining':>9}"]
    lines += [
        f"{r.name!r:30} {r.assigned:>8} {r.done:>8} {r.skipped:>8} {r.locked:>8} {r.remaining:>9}"
        for r in rows
    ]
    _emit(
        args,
        {
            "dataset": dataset.name,
            "task": args.task,
            "items": n_items,
            "annotators": [
                {
                    "name": r.name,
                    "assigned": r.assigned,
                    "done": r.done,
                    "skipped": r.skipped,
                    "locked": r.locked,
                    "remaining": r.remaining,
                }
                for r in rows
            ],
        },
        "\n".join(lines) if rows else lines[0] + "; nothing is assigned yet.",
    )
    return 0


def _team_task_arguments(parser: argparse.ArgumentParser) -> None:
    from db.models import TASKS

    parser.add_argument("--dataset", required=True, help="the dataset, by name")
    parser.add_argument("--task", required=True, choices=TASKS, help="the annotation task")


def _assign_arguments(parser: argparse.ArgumentParser) -> None:
    _team_task_arguments(parser)
    parser.add_argument(
        "--annotators", required=True, help="comma-separated user names; their order breaks ties"
    )
    parser.add_argument("--k", type=int, required=True, help="annotators per item")


def cmd_promote(args: argparse.Namespace) -> int:
    from analysis.adjudication import RULES
    from db.access import OPERATOR, Forbidden
    from db.repositories.adjudication import promote_by_rule
    from db.repositories.datasets import get_dataset
    from db.repositories.gold_origin import ReplacesImportedGold

    if not 0.0 <= args.threshold <= 1.0:
        print(f"error: --threshold lies in [0, 1]; got {args.threshold}", file=sys.stderr)
        return USAGE
    engine = _engine(args)
    dataset = get_dataset(engine, args.dataset)
    if dataset is None:
        return _refused(args, f"there is no dataset named {args.dataset!r}")

    def promote(replacing: str | None = None) -> RuleSummary:
        return promote_by_rule(
            engine,
            dataset.id,
            args.task,
            RULES[args.rule],
            threshold=args.threshold,
            actor=OPERATOR,
            dry_run=args.dry_run,
            replacing=replacing,
        )

    try:
        try:
            summary = promote()
        except ReplacesImportedGold as unseen:
            if not args.replace:
                return _refused(
                    args, f"{unseen} --dry-run lists them; --replace replaces them with the rule's labels."
                )
            summary = promote(unseen.imported.digest)  # exactly what was named, or refused again
    except (Forbidden, ReplacesImportedGold) as refused:
        return _refused(args, str(refused))
    verb = "would promote" if args.dry_run else "promoted"
    imported = f"; {summary.imported.summary()} among them" if summary.imported.rows else ""
    lines = [
        f"{args.rule} on {args.task} of {dataset.name!r}: {verb} {len(summary.promoted)} item(s)"
        f" ({summary.replaced} replacing other gold labels{imported}), {len(summary.review)} need review,"
        f" {summary.unchanged} unchanged since their promotion,"
        f" {summary.single} with fewer than two annotators"
    ]
    lines += [f"  review {item}: {reason}" for item, reason in summary.review]
    lines += _replaced_lines(summary, "replaces" if args.dry_run else "replaced")
    _emit(args, {"dataset": dataset.name, **summary.to_dict()}, "\n".join(lines))
    return 0


# Items whose replaced gold the text output lists, label by label (--json lists every one).
LISTED_ITEMS = 50


def _replaced_lines(summary: RuleSummary, verb: str) -> list[str]:
    """The gold labels no promotion wrote that the rule replaces, one line an item (the first
    :data:`LISTED_ITEMS` items, then a count of the rest)."""
    listed = summary.imported.per_item()
    lines = [f"  {verb} {item}: {'; '.join(says)}" for item, says in listed[:LISTED_ITEMS]]
    rest = listed[LISTED_ITEMS:]
    if rest:
        labels = sum(len(says) for _, says in rest)
        lines.append(
            f"  … and {labels} more label{'s' if labels != 1 else ''} on {len(rest)} more "
            f"item{'s' if len(rest) != 1 else ''} (--json lists them all)"
        )
    return lines


# The rules of ``analysis.adjudication`` (named here so building the parser loads no analysis code).
PROMOTION_RULES = ("majority", "unanimity", "alignbench")


def _promote_arguments(parser: argparse.ArgumentParser) -> None:
    from db.models import TASKS

    parser.add_argument("--dataset", required=True, help="the dataset whose agreed items to promote")
    parser.add_argument("--task", required=True, choices=TASKS, help="the labels to promote")
    parser.add_argument(
        "--rule", required=True, choices=PROMOTION_RULES, help="when annotators count as agreed"
    )
    parser.add_argument("--threshold", type=float, default=0.5, help="IoU at which two spans match (spans)")
    parser.add_argument("--dry-run", action="store_true", help="count what would happen; write nothing")
    parser.add_argument(
        "--replace",
        action="store_true",
        help="replace gold labels no promotion wrote, such as those imported with the dataset "
        "(refused without; --dry-run lists them)",
    )


def _read_password() -> str:
    """The new password: one line of piped standard input, or typed twice at a prompt (no echo)."""
    import getpass

    if not sys.stdin.isatty():
        return sys.stdin.readline().removesuffix("\n").removesuffix("\r")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Password again: ") != first:
        raise ValueError("the two passwords differ; nothing changed")
    return first


def _user_dict(user: Any) -> dict[str, Any]:
    return {
        "id": user.id,
        "name": user.name,
        "role": user.role,
        "disabled": user.disabled,
        "has_password": user.has_password,
        "locked_until": user.locked_until.isoformat() if user.locked_until else None,
        "email": user.email,
    }


def cmd_user(args: argparse.Namespace) -> int:
    """Team-mode accounts: add, list, change role, disable or enable, set a password."""
    from db.access import OPERATOR
    from db.repositories import accounts

    engine = _engine(args)
    if args.action == "list":
        users = accounts.list_users(engine)
        lines = [
            f"{u.name}  {u.role}"
            + ("  disabled" if u.disabled else "")
            + ("" if u.has_password else "  no password (cannot log in)")
            + (f"  <{u.email}>" if u.email else "")
            for u in users
        ]
        _emit(args, {"users": [_user_dict(u) for u in users]}, "\n".join(lines) or "No users yet.")
        return 0
    try:
        if args.action == "add":
            user = accounts.add_user(
                engine, args.name, args.role, _read_password(), actor=OPERATOR, email=args.email
            )
            done = f"Added {user.name!r} as {user.role}."
        elif args.action == "set-role":
            user = accounts.set_role(engine, args.name, args.role, actor=OPERATOR)
            done = f"{user.name!r} is now {user.role}; their open sessions ended."
        elif args.action in ("disable", "enable"):
            user = accounts.set_disabled(engine, args.name, args.action == "disable", actor=OPERATOR)
            done = f"{user.name!r} is {'disabled' if user.disabled else 'enabled'}."
        else:
            user = accounts.set_password(engine, args.name, _read_password(), actor=OPERATOR)
            done = f"New password set for {user.name!r}; their open sessions ended."
    except ValueError as refused:  # accounts.AccountError, an invalid name, differing passwords
        return _refused(args, str(refused))
    _emit(args, {"ok": True, "user": _user_dict(user)}, done)
    return 0


def cmd_gold_locks(args: argparse.Namespace) -> int:
    """``gold-locks list``: every record of gold shown to a blind annotator on the dataset, lifted or
    not; ``gold-locks lift``: lift the annotator's locks (``--item``: only those items), keeping the
    records (:mod:`db.repositories.gold_sightings`)."""
    from db.access import OPERATOR, Forbidden, utc_minute
    from db.repositories.annotators import find_annotator
    from db.repositories.datasets import get_dataset
    from db.repositories.gold_sightings import lift_locks, list_sightings
    from db.repositories.items import get_item

    engine = _engine(args)
    dataset = get_dataset(engine, args.dataset)
    if dataset is None:
        return _refused(args, f"there is no dataset named {args.dataset!r}")
    annotator = None
    if args.annotator is not None:
        annotator = find_annotator(engine, args.annotator)
        if annotator is None:
            return _refused(args, f"there is no user named {args.annotator!r}")
    if args.action == "list":
        rows = list_sightings(engine, dataset.id, annotator_id=None if annotator is None else annotator.id)
        locked = sum(r.locks for r in rows)
        lines = [f"{dataset.name!r}: {len(rows)} record(s) of gold shown, {locked} still locking"]
        lines += [
            f"{r.annotator!r} saw gold of item {r.external_id!r} on {utc_minute(r.shown_at)} ({r.page} page); "
            + (
                "locked"
                if r.lifted_at is None
                else f"lifted {utc_minute(r.lifted_at)} by "
                + ("the command line" if r.lifted_by is None else repr(r.lifted_by))
            )
            for r in rows
        ]
        _emit(
            args,
            {
                "dataset": dataset.name,
                "sightings": [
                    {
                        "annotator": r.annotator,
                        "item": r.external_id,
                        "page": r.page,
                        "shown_at": utc_minute(r.shown_at),
                        "locks": r.locks,
                        "lifted_at": None if r.lifted_at is None else utc_minute(r.lifted_at),
                        "lifted_by": r.lifted_by,
                    }
                    for r in rows
                ],
            },
            "\n".join(lines),
        )
        return 0
    if annotator is None:
        print("error: gold-locks lift needs --annotator NAME", file=sys.stderr)
        return USAGE
    item_ids: list[int] | None = None
    if args.item:
        item_ids = []
        for external_id in args.item:
            item = get_item(engine, dataset.id, external_id)
            if item is None:
                return _refused(args, f"there is no item {external_id!r} in {dataset.name!r}")
            item_ids.append(item.id)
    try:
        lifted = lift_locks(engine, dataset.id, annotator.id, actor=OPERATOR, item_ids=item_ids)
    except (Forbidden, ValueError) as refused:
        return _refused(args, str(refused))
    _emit(
        args,
        {"ok": True, "dataset": dataset.name, "annotator": annotator.name, "lifted": lifted},
        (
            f"Lifted the lock of {annotator.name!r} on {len(lifted)} item(s) of {dataset.name!r}: "
            + ", ".join(map(repr, lifted))
            + "; the records stay, marked lifted."
        )
        if lifted
        else f"Nothing to lift: {annotator.name!r} has no locked item"
        + ("" if item_ids is None else " among those named")
        + f" in {dataset.name!r}.",
    )
    return 0


def _gold_locks_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="every record of gold shown on the dataset, lifted or not")
    listing.add_argument("--annotator", help="only this user's records")
    lift = actions.add_parser("lift", help="let an annotator label items again whose gold they were shown")
    lift.add_argument("--annotator", help="the user whose locks are lifted (required)")
    lift.add_argument(
        "--item", action="append", metavar="ID", help="only this item, by its id (repeat for more)"
    )
    for sub_command in (listing, lift):
        sub_command.add_argument("--dataset", required=True, help="the dataset, by name")
        _common_arguments(sub_command)


def _copy_store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--to", required=True, metavar="URL", help="the empty store to copy into (a database URL)"
    )


def _user_arguments(parser: argparse.ArgumentParser) -> None:
    from db.models import ROLES

    actions = parser.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="create an account (password from stdin or a prompt)")
    add.add_argument("name", metavar="NAME")
    add.add_argument("--role", required=True, choices=ROLES)
    add.add_argument("--email", help="the e-mail an SSO login maps onto this account")
    actions.add_parser("list", help="every account with its role and state")
    set_role = actions.add_parser("set-role", help="give an account another role (its sessions end)")
    set_role.add_argument("name", metavar="NAME")
    set_role.add_argument("role", metavar="ROLE", choices=ROLES)
    for action, help_text in (
        ("disable", "stop an account from logging in (its sessions end)"),
        ("enable", "let a disabled account log in again"),
        ("password", "set a new password (from stdin or a prompt; sessions end)"),
    ):
        actions.add_parser(action, help=help_text).add_argument("name", metavar="NAME")
    for sub_command in actions.choices.values():
        _common_arguments(sub_command)


COMMANDS: dict[str, tuple[Command, str]] = {
    "init": (cmd_init, "migrate the store and load the demo dataset if it is empty"),
    "demo": (cmd_demo, "(re)create the synthetic demo dataset"),
    "stats": (cmd_stats, "list datasets with item, span, label and label-set counts"),
    "import": (cmd_import, "import benchmark files (format recognised or given)"),
    "import-predictions": (cmd_import_predictions, "import one detector run over a stored dataset"),
    "export": (cmd_export, "write a dataset (and chosen label sets) in a format"),
    "export-mapping": (cmd_export_mapping, "write the field mapping a dataset was imported with"),
    "evaluate": (cmd_evaluate, "print the papers' tables (metrics, agreement, correlation) for a dataset"),
    "imports": (cmd_imports, "list recent imports with their log ids"),
    "copy-store": (cmd_copy_store, "copy the whole store into an empty one (to move to PostgreSQL)"),
    "undo-import": (cmd_undo_import, "undo an import by its log id, putting back what it replaced"),
    "run-detector": (
        cmd_run_detector,
        "run a detector live over a dataset through a chat-completions endpoint",
    ),
    "assign": (cmd_assign, "give every item of a task k annotators among those named, balanced"),
    "progress": (cmd_progress, "each annotator's assigned, done, skipped and remaining items on a task"),
    "promote": (
        cmd_promote,
        "promote agreed items' labels to gold by a rule (majority, unanimity, alignbench)",
    ),
    "user": (cmd_user, "team-mode accounts: add, list, set-role, disable, enable, password"),
    "gold-locks": (
        cmd_gold_locks,
        "gold shown to blind annotators: list the records, lift an annotator's locks",
    ),
}
# Arguments beyond --db and --json, per command.
ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "import": _import_arguments,
    "import-predictions": _import_predictions_arguments,
    "export": _export_arguments,
    "export-mapping": _export_mapping_arguments,
    "evaluate": _evaluate_arguments,
    "imports": _imports_arguments,
    "copy-store": _copy_store_arguments,
    "undo-import": _undo_import_arguments,
    "run-detector": _run_detector_arguments,
    "assign": _assign_arguments,
    "progress": _team_task_arguments,
    "promote": _promote_arguments,
}
# Commands made of sub-commands: each sub-command takes --db and --json itself.
GROUPS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "user": _user_arguments,
    "gold-locks": _gold_locks_arguments,
}


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, help="database URL (default: DATABASE_URL, then SQLite)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``only``) one whose other commands have no arguments: some commands'
    choices come from the store's models, and ``cli.py --help`` or one command should not load them all."""
    parser = argparse.ArgumentParser(prog="cli.py", description="Spanlight headless commands.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        if only is not None and name != only:
            continue
        if name in GROUPS:
            GROUPS[name](command)
            continue
        _common_arguments(command)
        if name in ARGUMENTS:
            ARGUMENTS[name](command)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Ids, names and reasons from files are printed as their characters: an ESC or a carriage return
    # in a file must not recolour the terminal or overwrite a line.
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleControls(sys.stdout), VisibleControls(sys.stderr)
    try:
        given = list(sys.argv[1:] if argv is None else argv)
        args = build_parser(next((a for a in given if not a.startswith("-")), "")).parse_args(given)
        handler = COMMANDS[args.command][0]
        try:
            return handler(args)
        except Exception as error:  # noqa: BLE001 - the CLI reports every failure the same way
            print(f"error: {error}", file=sys.stderr)
            return 1
    finally:
        sys.stdout, sys.stderr = streams


if __name__ == "__main__":
    sys.exit(main())
