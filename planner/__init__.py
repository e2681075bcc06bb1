"""planner: where should my GPU hours run — a card I buy, rented GPUs, or free tiers?

For notebooks::

    import planner
    s = planner.load_scenario("scenarios/thesis.yaml")
    p = planner.plan(s)
    p.quotes          # every (phase, option) priced, a DataFrame
    planner.to_dict(p)  # the JSON object of OUTPUT.md
"""

__version__ = "0.1.0"

from .api import load_scenario, plan, to_dict  # noqa: E402

__all__ = ["load_scenario", "plan", "to_dict", "__version__"]
