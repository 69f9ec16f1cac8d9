"""Witnesses: for each rule, as each operation shows it, the shortest case that reaches it, then probes of what
it left; searched once on the model and replayed on any target.

Hypothesis finds what nobody foresaw, but on a real clock its coverage rounds cost minutes: each case waits in
real time, and a rule reached by one sequence in a thousand (a stale handle changed, an extension that must not
stick) is reached late or never. A witness reaches it at once. They are searched on the model (a virtual clock,
but paced as the target's clock will be: the same short waits and timeouts), shipped with the suite in
`conformance/witnesses/`, and replayed concurrently, one queue each, so the whole catalogue takes about as
long as its longest witness.

This module is their public face; each job has its own module:

- `catalogue`: what a witness is, and storing catalogues;
- `judged`: witnesses replayed on the model as their targets are judged;
- `search`: searching them with Hypothesis;
- `trimming`: leaving out every step a case can do without;
- `probes`: the probes of what a witness left;
- `replay`: replaying a catalogue on targets.
"""

from sqs_conformance.conformance.witnesses.catalogue import (
    PACES, WITNESS_DIR, Aim, Catalogue, Witness, WitnessError, aims_of, held_and_moving, load, pace_of, path_for,
    profiles_and_paces, save,
)
from sqs_conformance.conformance.witnesses.judged import (
    JudgedModel, aims_reached, judged_model, replayed_on_model, stale,
)
from sqs_conformance.conformance.witnesses.probes import PROBE_WAIT, with_probes
from sqs_conformance.conformance.witnesses.replay import (
    Replayed, distinct_witnesses, merged_replays, replay, replay_case,
)
from sqs_conformance.conformance.witnesses.search import (
    RULE_EXAMPLES, explore, relabelled, search, search_catalogue, witness_from_case,
)
from sqs_conformance.conformance.witnesses.trimming import fewest_steps

__all__ = [
    "PACES", "PROBE_WAIT", "RULE_EXAMPLES", "WITNESS_DIR", "Aim", "Catalogue", "JudgedModel", "Replayed", "Witness",
    "WitnessError", "aims_of", "aims_reached", "distinct_witnesses", "explore", "fewest_steps", "held_and_moving",
    "judged_model",
    "load", "merged_replays", "pace_of", "path_for", "profiles_and_paces", "relabelled", "replay", "replay_case",
    "replayed_on_model", "save", "search", "search_catalogue", "stale", "with_probes", "witness_from_case",
]
