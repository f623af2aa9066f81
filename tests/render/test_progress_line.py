"""The progress line of a long command: written to a terminal only, rewritten in place at most every so
often, cut to the terminal's width, with a file's control characters shown as escapes."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import struct
import termios

from render.progress_line import ProgressLine
from render.terminal_text import VisibleControls

ERASE = "\r\x1b[K"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def line_on(stream: io.StringIO, clock: Clock, width: int = 80) -> ProgressLine:
    return ProgressLine(stream, every=0.2, clock=clock, width=lambda: width)


def test_a_file_or_a_pipe_gets_nothing() -> None:
    stream, clock = io.StringIO(), Clock()
    line = line_on(stream, clock)
    line.show("Checking and writing items (834 read)…", new_stage=True)
    line.clear()
    line.end()
    assert stream.getvalue() == ""


def test_rewrites_in_place_at_most_every_so_often_unless_a_stage_begins() -> None:
    screen, clock = Terminal(), Clock()
    line = line_on(screen, clock)
    line.show("read 1")
    clock.now += 0.05
    line.show("read 2")  # too soon: a batch of a fast import
    line.show("writing", new_stage=True)
    clock.now += 0.25
    line.show("read 3")
    assert screen.getvalue() == f"{ERASE}read 1{ERASE}writing{ERASE}read 3"


def test_clear_erases_the_line_and_end_leaves_it_standing() -> None:
    screen, clock = Terminal(), Clock()
    line = line_on(screen, clock)
    line.clear()
    line.end()
    assert screen.getvalue() == ""  # nothing shown: nothing to erase, no empty line
    line.show("10/10 items")
    line.end()
    line.end()
    line.show("reading")
    line.clear()
    assert screen.getvalue() == f"{ERASE}10/10 items\n{ERASE}reading{ERASE}"


def test_cut_to_the_width_of_the_terminal_wide_characters_taking_two_columns() -> None:
    screen, clock = Terminal(), Clock()
    line = line_on(screen, clock, width=11)
    line.show("Reading a-very-long-name.csv")
    clock.now += 1
    line.show("読み込み中のファイル")
    # one column is left free: a line that fills the last column wraps on some terminals
    assert screen.getvalue() == f"{ERASE}Reading a-{ERASE}読み込み中"


def test_control_characters_from_a_file_are_shown_as_escapes_behind_visible_controls() -> None:
    screen, clock = Terminal(), Clock()
    line = ProgressLine(VisibleControls(screen), clock=clock, width=lambda: 200)
    line.show("Reading evil\x1b[2J\rok.csv\nas CSV")
    assert screen.getvalue() == f"{ERASE}Reading evil\\u001b[2J\\u000dok.csv as CSV"


def test_end_writes_the_newest_text_held_back_before_leaving_it_standing() -> None:
    """A detector run's last report came right after another and was held back: the line left above the
    summary said fewer items than the summary."""
    screen, clock = Terminal(), Clock()
    line = line_on(screen, clock)
    line.show("37/50 items")
    clock.now += 0.05
    line.show("44/50 items")
    line.show("45/50 items")
    line.end()
    assert screen.getvalue() == f"{ERASE}37/50 items{ERASE}45/50 items\n"


def test_clear_forgets_a_text_held_back() -> None:
    screen, clock = Terminal(), Clock()
    line = line_on(screen, clock)
    line.show("reading")
    line.show("read 1")
    line.clear()
    line.end()
    assert screen.getvalue() == f"{ERASE}reading{ERASE}"


def test_say_puts_a_message_on_a_line_of_its_own_above_the_progress() -> None:
    screen, clock = Terminal(), Clock()
    line = line_on(screen, clock)
    line.say("before anything")
    line.show("3/10 items")
    line.say("cancelling")
    line.show("4/10 items")
    assert screen.getvalue() == f"before anything\n{ERASE}3/10 items\ncancelling\n{ERASE}4/10 items"
    piped = io.StringIO()
    ProgressLine(piped).say("cancelling")
    assert piped.getvalue() == "cancelling\n"


def test_a_tab_takes_one_column_as_a_space() -> None:
    screen, clock = Terminal(), Clock()
    line_on(screen, clock).show("a\tb\nc")
    assert screen.getvalue() == f"{ERASE}a b c"


def test_the_width_is_that_of_the_terminal_written_to_not_of_stdout() -> None:
    """With ``--json > out.json`` stdout is a file: the line on stderr's terminal was cut to 80 columns and
    wrapped on a narrower one, leaving a trail of old lines."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 30, 0, 0))
    with os.fdopen(follower, "w") as terminal:
        assert terminal.isatty()
        ProgressLine(terminal).show("Checking and writing items (834 read, 5% of the file)…")
    written = os.read(leader, 4096).decode()
    os.close(leader)
    assert written == f"{ERASE}Checking and writing items (8"  # 29 columns: the last one left free
