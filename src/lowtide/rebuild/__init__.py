"""Rebuilding a lost or damaged ledger from the providers' APIs (`lowtide ledger rebuild`), so that a rerun of the
same program collects what was sent instead of sending it again: the accounts read (`Source`), the identities their
batches' custom ids carry (`survey`), every batch of the lost ledger's the APIs still hold (`look`, a `Plan`), and the
rows that record them, written into a new ledger that takes the lost one's identity (`record`)."""

from lowtide.rebuild.found import UNATTRIBUTED, FoundBatch, Owner, Seen, Source, sources_of
from lowtide.rebuild.plan import Counted, Plan, Survey, look, survey
from lowtide.rebuild.rows import HASHED_NOTE, Rebuilt
from lowtide.rebuild.write import check_target, held, record

__all__ = [
    "HASHED_NOTE",
    "UNATTRIBUTED",
    "Counted",
    "FoundBatch",
    "Owner",
    "Plan",
    "Rebuilt",
    "Seen",
    "Source",
    "Survey",
    "check_target",
    "held",
    "look",
    "record",
    "sources_of",
    "survey",
]
