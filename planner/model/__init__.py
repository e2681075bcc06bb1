"""The world as given: the scenario and its quantities, a workload's memory and speed on each
device, sessions and checkpoints, and the money formulas (electricity, storage, resale).

May import: ``pricing`` (the catalog) and this wing. Nothing here knows of a plan.
"""
