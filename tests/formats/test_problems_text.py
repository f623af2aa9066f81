"""How a problem reads in a message: a whole file's names no record or field."""

from formats.problems import Problem


def test_a_whole_files_problem_names_no_record_or_field() -> None:
    assert str(Problem("a.json", "-", "-", "the file is empty")) == "a.json: the file is empty"
    assert (
        str(Problem("a.json", "#3 (id=x)", "-", "not an object")) == "a.json: record #3 (id=x): not an object"
    )
    assert str(Problem("a.json", "#3", "id", "missing")) == "a.json: record #3: field 'id': missing"
    assert (
        str(Problem("a.json", "-", "dataset", "no such dataset"))
        == "a.json: field 'dataset': no such dataset"
    )


def test_negative_offsets_read_apart_not_as_a_range() -> None:
    """ "offsets -5-3" read like a range from 5 to 3."""
    from formats.problems import outside

    assert outside(-5, 3, "test_solution", 20) == (
        "offsets (start -5, end 3) are not a span of test_solution, which is 20 characters long"
    )
