"""Small frames the job builds from values it holds (the manifest's files, the minimal cases it looks up)."""

import pytest

from sqs_conformance.reports.ingest import literal_frame

pytestmark = pytest.mark.xdist_group("spark")


def test_a_literal_frame_holds_its_rows_as_given_with_their_types(spark):
    rows = [("s1", 'file:///tmp/a "quoted"\\ ünïcode.jsonl', 0), ("s2", None, 2**40), ("s1", "", -3)]
    frame = literal_frame(spark, rows, "source string, file string, case bigint")
    assert frame.schema.simpleString() == "struct<source:string,file:string,case:bigint>"
    assert [tuple(row) for row in frame.collect()] == rows


def test_a_literal_frame_of_no_rows_is_empty_and_typed(spark):
    frame = literal_frame(spark, [], "source string, case bigint")
    assert frame.schema.simpleString() == "struct<source:string,case:bigint>"
    assert frame.collect() == []
