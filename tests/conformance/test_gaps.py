"""A rule exercised only where any answer was permitted is a gap of the run, never a pass."""

from sqs_conformance.conformance.runner import RunResult
from sqs_conformance.conformance.session import Tallies
from sqs_conformance.model.outcomes import Outcome, Verdict
from sqs_conformance.model.values import ChangeOk, ErrorSpec


def test_a_rule_only_ever_undecided_is_reported_as_a_gap():
    tallies = Tallies()
    undecided = Verdict(Outcome(ChangeOk(), ("VIS-CEILING", "VIS-EXTEND-NONADDITIVE")),
                        others=(Outcome(ErrorSpec("InvalidParameterValue"), ("VIS-CEILING",)),))
    decided = Verdict(Outcome(ChangeOk(), ("VIS-EXTEND-NONADDITIVE",)))
    for verdict in (undecided, decided):
        tallies.add(verdict, verdict.divergences)
    result = RunResult(target="t", target_version="1", run_id="r", profile="sqs-standard", tallies=tallies)
    assert (tallies.rules["VIS-CEILING"].exercised, tallies.rules["VIS-CEILING"].decisive) == (1, 0)
    assert result.verdict("VIS-CEILING") == "undecided" and "VIS-CEILING" in result.gaps()
    assert result.verdict("VIS-EXTEND-NONADDITIVE") == "conforms" and "VIS-EXTEND-NONADDITIVE" not in result.gaps()
    assert result.verdict("VIS-TERMINATE") == "not exercised" and "VIS-TERMINATE" in result.gaps()
