"""Findings as expected failures, tlaplus-style.

Each finding's property is an invariant of its machine's explorer. Under the
seed default it must fail, with a shortest trace; with the finding's option
enabled it must hold. Both are checked by exhaustive exploration at the
machine's default bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inboxspec import machines
from inboxspec.checker.explore import Explorations
from inboxspec.checker.traces import NoReferenceOutputs, concrete_steps, lasso_lines, to_case, trace_lines
from inboxspec.machines.frame import forever_properties


@dataclass
class FindingResult:
    machine: str
    finding: str
    invariant: str
    requirements: tuple[str, ...]
    option: str
    fails_by_default: bool
    holds_with_option: bool
    trace: list[str]
    case: dict[str, Any] | None
    # Why the trace could not be made a case (the reference gave it no outputs), or None.
    case_problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.fails_by_default and self.holds_with_option and self.case_problem is None

    def as_json(self) -> dict[str, Any]:
        return {"machine": self.machine, "finding": self.finding, "property": self.invariant,
                "requirements": list(self.requirements), "option": self.option,
                "fails_by_default": self.fails_by_default,
                "holds_with_option": self.holds_with_option, "ok": self.ok,
                "shortest_trace": self.trace, "as_case": self.case, "case_problem": self.case_problem}


def check_findings(explorations: Explorations | None = None) -> list[FindingResult]:
    explorations = explorations or Explorations()
    results = []
    for entry in machines.all_machines():
        name, explorer = entry.name, entry.explorer
        default = explorations.get(name)
        for invariant in explorer.invariants:
            if invariant.finding is None or invariant.option is None:
                continue
            fixed = explorations.get(name, options={invariant.option: True})
            if invariant.name not in fixed.invariants_checked:
                raise RuntimeError(f"{name}: the exploration with {invariant.option} did not check "
                                   f"{invariant.name}, the property its finding {invariant.finding} is about")
            trace = default.violations.get(invariant.name)
            case = case_problem = None
            if trace is not None:
                steps = concrete_steps(explorer, trace, default.bounds, default.options)
                try:
                    case = to_case(name, f"{name}/finding-{invariant.finding.lower()}",
                                   f"The shortest trace that breaks {invariant.name} under the seed default",
                                   list(invariant.requirements), explorer.config(default.bounds, {}),
                                   steps)
                except NoReferenceOutputs as error:
                    case_problem = str(error)
            results.append(FindingResult(
                name, invariant.finding, invariant.name, invariant.requirements, invariant.option,
                fails_by_default=trace is not None,
                holds_with_option=invariant.name not in fixed.violations,
                trace=trace_lines(explorer, trace, default.bounds, default.options) if trace else [],
                case=case,
                case_problem=case_problem))
    return results


@dataclass
class ForeverResult:
    """A forever-property at the default bounds (and with each option that fixes it, when it has one)."""

    machine: str
    prop: str
    requirements: tuple[str, ...]
    finding: str | None
    option: str | None
    expected_to_fail: bool
    fails_by_default: bool
    holds_with_option: bool | None  # None: the property has no option
    lasso: list[str]
    # Per option of the property's ``also_fixed_by``: whether it holds with that option on.
    also_fixed_by: dict[str, bool] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return (self.fails_by_default == self.expected_to_fail and self.holds_with_option is not False
                and all(self.also_fixed_by.values()))

    def fixed_with(self) -> list[tuple[str, bool]]:
        """Each option the property should hold with, and whether it does: its option, then its
        ``also_fixed_by``."""
        first = [] if self.option is None or self.holds_with_option is None else [
            (self.option, self.holds_with_option)]
        return first + list(self.also_fixed_by.items())

    def options_failing(self) -> list[str]:
        """The options the property should hold with and does not (its cycle is still there)."""
        return [option for option, holds in self.fixed_with() if not holds]

    def as_json(self) -> dict[str, Any]:
        return {"machine": self.machine, "property": self.prop, "requirements": list(self.requirements),
                "finding": self.finding, "option": self.option, "expected_to_fail": self.expected_to_fail,
                "fails_by_default": self.fails_by_default, "holds_with_option": self.holds_with_option,
                "also_fixed_by": self.also_fixed_by, "ok": self.ok, "lasso": self.lasso}


def check_forever(explorations: Explorations | None = None) -> list[ForeverResult]:
    """Every machine's forever-properties: each fails at the default bounds exactly when it
    is expected to, with a lasso, and holds with its option, and with each of its
    ``also_fixed_by``, when it has them."""
    explorations = explorations or Explorations()
    results = []
    for entry in machines.all_machines():
        properties = forever_properties(entry.explorer)
        if not properties:
            continue
        default = explorations.get(entry.name)
        for prop in properties:
            lasso = default.lassos.get(prop.name)
            holds = {option: prop.name not in explorations.get(entry.name, options={option: True}).lassos
                     for option in prop.fixing_options}
            holds_with_option = None if prop.option is None else holds.pop(prop.option)
            results.append(ForeverResult(
                entry.name, prop.name, prop.requirements, prop.finding, prop.option,
                expected_to_fail=prop.expected_to_fail_under({}), fails_by_default=lasso is not None,
                holds_with_option=holds_with_option,
                lasso=lasso_lines(entry.explorer, lasso.prefix, lasso.loop, default.bounds, default.options)
                if lasso else [],
                also_fixed_by=holds))
    return results


def finding_order(machine: str, finding: str | None) -> tuple[str, int, str]:
    """Where a finding is listed: by machine, then by its number (HOST-F2 before HOST-F10); a
    forever-property without a finding after the machine's findings."""
    if finding is None:
        return machine, 1 << 30, ""
    number = finding.rpartition("-F")[2]
    return machine, int(number) if number.isdigit() else 1 << 29, finding


def render_markdown(results: list[FindingResult], machine_name: str, explorations: Explorations) -> str:
    """The generated findings section of a machine's spec document: each finding in its order
    (``finding_order``), an invariant's with its shortest trace, a forever-property's with its
    lasso, both at the default bounds (from ``explorations``, which ``results`` came from)."""
    entries: list[tuple[tuple[str, int, str], list[str]]] = []
    for result in results:
        if result.machine != machine_name:
            continue
        verdict = "fails by default, holds with the option" if result.ok else "UNEXPECTED"
        entries.append((finding_order(machine_name, result.finding), [
            f"**{result.finding}** `{result.invariant}` ({verdict}; option `{result.option}`). "
            f"Shortest trace at the default bounds:\n", "```", *result.trace, "```\n"]))
    explorer = machines.get(machine_name).explorer
    for prop in forever_properties(explorer):
        default = explorations.get(machine_name)  # explored once: ``explorations`` keeps it
        lasso = default.lassos.get(prop.name)
        if lasso is None:
            continue
        finding = f"**{prop.finding}** " if prop.finding else ""
        fixes = " or ".join(f"`{option}`" for option in prop.fixing_options)
        entries.append((finding_order(machine_name, prop.finding), [
            f"{finding}`{prop.name}` (a forever-property; fails by default"
            + (f", holds with {fixes}" if fixes else "") + "). Its lasso at the default bounds, the "
            "shortest prefix and then a loop:\n", "```",
            *lasso_lines(explorer, lasso.prefix, lasso.loop, default.bounds, default.options), "```\n"]))
    entries.sort(key=lambda entry: entry[0])
    return "\n".join(line for _order, lines in entries for line in lines)
