"""Which functions a change touched: the headers of its changed sections
(``enrichment/fixes/sections.py``), git's funcname rule."""

from __future__ import annotations

from viano_bug_analysis.enrichment.fixes.sections import changed_headers, names_function, sections

OLD = [
    "// header",
    "uint32 Unit::CalcAbsorb(Unit* a, uint32 d)",
    "{",
    "    return d;",
    "}",
    "",
    "uint32 Unit::DealDamage(Unit* victim, uint32 damage)",
    "{",
    "    victim->ModifyHealth(-int32(damage));",
    "}",
]


def test_a_file_is_cut_at_lines_that_start_with_a_letter() -> None:
    cut = sections(OLD)
    assert cut[0] == ("", "// header")  # a comment starts no section
    assert [h for h, _ in cut][1:] == [
        "uint32 Unit::CalcAbsorb(Unit* a, uint32 d)",
        "uint32 Unit::DealDamage(Unit* victim, uint32 damage)",
    ]


def test_a_change_inside_a_body_names_its_function() -> None:
    new = list(OLD)
    new.insert(8, "    if (!victim)\n        return 0;")
    assert changed_headers(OLD, new) == ("uint32 Unit::DealDamage(Unit* victim, uint32 damage)",)
    assert changed_headers(OLD, OLD) == ()


def test_a_moved_function_is_no_change_and_an_added_one_is() -> None:
    moved = OLD[:1] + OLD[6:] + [""] + OLD[1:6]
    assert changed_headers(OLD, moved) == ()
    added = [*OLD, "void Unit::Kill()", "{", "}"]
    assert changed_headers(OLD, added) == ("void Unit::Kill()",)


def test_names_function() -> None:
    assert names_function("uint32 Unit::DealDamage(Unit* victim)", "DealDamage")
    assert not names_function("uint32 Unit::DealDamageMods(Unit* victim)", "DealDamage")
    assert not names_function("// DealDamage is called from here", "DealDamage")
    # A method defined in its class's body: the class line is the header.
    header = "struct npc_lazy_peon : public ScriptedAI"
    assert names_function(header, "UpdateAI", frozenset({"npc_lazy_peon"}))
    assert not names_function(header, "UpdateAI")
