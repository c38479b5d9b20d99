"""``mcp-tasks list`` shows a record's id by its first digits (issue 30 item 6): at least six, as many as
tell it from every other record's id, so that ``show``/``find`` take it back."""

from mcp_tasks_jupyter.exports.cli import SHORT_ID_DIGITS, short_ids


def test_ids_are_cut_to_what_tells_them_apart() -> None:
    ids = [1234567890123456789, 1234567800000000000, 987654321098765432]
    short = short_ids(ids)
    assert short[987654321098765432] == "987654"  # alone in its first digits
    assert short[1234567890123456789] == "123456789" and short[1234567800000000000] == "123456780"
    for record_id, text in short.items():
        assert len(text) >= SHORT_ID_DIGITS and str(record_id).startswith(text)
        assert [i for i in ids if str(i).startswith(text)] == [record_id]


def test_no_ids_and_one_id() -> None:
    assert short_ids([]) == {}
    assert short_ids([42]) == {42: "42"}
