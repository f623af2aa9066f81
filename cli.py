"""HalluScope on the command line: the same store and rules as the app, without a browser.

    python cli.py init  [--db URL]            migrate, and load the demo if the store is empty
    python cli.py demo  [--db URL] [--json]   (re)create the synthetic demo dataset
    python cli.py stats [--db URL] [--json]   datasets with their counts

``--db`` defaults to ``DATABASE_URL``, then to the embedded SQLite file (see ``db/config.py``).
Every command exits non-zero on failure and prints the reason.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from db.config import redact, resolve_url
from db.engine import make_engine
from db.migrate import upgrade

Command = Callable[[argparse.Namespace], int]


def _engine(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    engine = make_engine(args.db)
    upgrade(engine)
    return engine


def _emit(args: argparse.Namespace, payload: Any, text: str) -> None:
    print(json.dumps(payload, indent=2, ensure_ascii=False) if args.json else text)


def cmd_init(args: argparse.Namespace) -> int:
    from demo.load import ensure_demo

    engine = _engine(args)
    loaded = ensure_demo(engine)
    _emit(
        args,
        {"database": redact(resolve_url(args.db)), "demo_loaded": loaded},
        f"Store ready at {redact(resolve_url(args.db))}" + ("; demo dataset loaded." if loaded else "."),
    )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from demo.load import load_demo

    engine = _engine(args)
    result = load_demo(engine)
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
        f"{r['name'][:40]:40} {r['items']:>7} {r['spans']:>7} {r['sentence_labels']:>8} {r['label_sets']:>5}"
        for r in rows
    ]
    _emit(args, {"datasets": rows}, "\n".join(lines) if rows else "No datasets yet.")
    return 0


COMMANDS: dict[str, tuple[Command, str]] = {
    "init": (cmd_init, "migrate the store and load the demo dataset if it is empty"),
    "demo": (cmd_demo, "(re)create the synthetic demo dataset"),
    "stats": (cmd_stats, "list datasets with item, span, label and label-set counts"),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cli.py", description="HalluScope headless commands.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text)
        command.add_argument("--db", default=None, help="database URL (default: DATABASE_URL, then SQLite)")
        command.add_argument("--json", action="store_true", help="print a JSON summary")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    handler = COMMANDS[args.command][0]
    try:
        return handler(args)
    except Exception as error:  # noqa: BLE001 - the CLI reports every failure the same way
        print(f"error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
