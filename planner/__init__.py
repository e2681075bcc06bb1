"""planner: where should my GPU hours run — a card I buy, rented GPUs, or free tiers?

For notebooks::

    import planner
    s = planner.load_scenario("scenarios/thesis.yaml")
    p = planner.plan(s)
    p.quotes          # every (phase, option) priced, a DataFrame
    planner.to_dict(p)  # the JSON object of docs/output.md
"""

__version__ = "0.1.0"

__all__ = ["__version__", "load_scenario", "plan", "to_dict"]


def __getattr__(name: str) -> object:
    """The entry points load on first use, so ``planner --help`` and ``import pricing`` stay quick
    (the engine brings pandas and HiGHS)."""
    if name in ("load_scenario", "plan", "to_dict"):
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")
