"""Long generated sessions: lawful ones give no finding under every ruleset
that fits them, and planted breaches come back exactly where they were
planted. The generator and the auditor are written independently, so their
agreement is evidence that both read the rules the same way."""

import pytest
from builder import audit

from auditor.generate import INJECTABLE, generate, write_log
from auditor.rules.ruleset import load_ruleset


@pytest.fixture(scope="module")
def lawful_night(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lawful")
    stick = generate(tables=3, rolls=400, seed=2026)
    dealer = generate(tables=2, rolls=300, seed=1996, offer_role="dealer")
    write_log(stick.table, folder / "stick.parquet")
    write_log(dealer.table, folder / "dealer.csv")
    return folder


@pytest.mark.parametrize("ruleset", ["nz-table-games", "sd-20-18-33", "nsw-1992"])
def test_long_lawful_session_has_no_findings(lawful_night, ruleset):
    result = audit([lawful_night / "stick.parquet"], ruleset)
    shooters = result.logs.events.query("event == 'dice_accepted'")
    assert len(shooters) > 30  # many shooters, not one long hand
    assert result.findings.empty, result.findings[["code", "table_id", "seq"]].head()


def test_long_lawful_session_with_dealer_offers_has_no_findings_under_nz_1996(lawful_night):
    assert audit([lawful_night / "dealer.csv"], "nz-1996").findings.empty


@pytest.mark.parametrize("ruleset", ["nz-table-games", "nz-1996", "sd-20-18-33", "nsw-1992"])
def test_planted_breaches_are_found_exactly(tmp_path, ruleset):
    enforced = {r.code for r in load_ruleset(ruleset).rules}
    codes = [c for c in INJECTABLE if c in enforced]
    if ruleset == "nsw-1992":  # NSW offer rules govern only the start of play
        codes = [c for c in codes if not c.startswith("offer.")]
    log = generate(tables=2, rolls=200, seed=7, inject=codes,
                   offer_role="dealer" if ruleset == "nz-1996" else "stickperson")
    write_log(log.table, tmp_path / "night.parquet")
    f = audit([tmp_path / "night.parquet"], ruleset).findings
    got = {(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])}
    want = {(p["code"], p["table_id"], p["seq"]) for p in log.planted}
    if ruleset == "sd-20-18-33":
        # SD 20:18:33:08(2): a shooter who made the point and threw without a
        # line bet is also outside the marker-off exception.
        also = {("shooter.marker_off_throw", t, s) for c, t, s in want
                if c == "shooter.ineligible"}
        assert want <= got and got - want <= also
    else:
        assert got == want
