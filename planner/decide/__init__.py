"""Deciding: every option the scenario may use (``options``), its price and hours for each phase
(``quotes``), the mixed-integer program (``milp``), the plan read off its solution
(``optimize``, ``result``), and what is said about it: break-even and the uncertainty analysis.

May import: ``planner.model``, ``pricing`` and this wing.
"""
