"""Energy and emissions of running work: one formula, one place.

Operational: the device's board power (and the host's, for a card you own or buy) over the
wall hours, times the facility's power usage effectiveness (PUE, 1.0 at home: no facility),
times the carbon intensity of its grid (g CO2e per kWh, a yearly life-cycle average). Board
power at full load is how published training footprints count it (Touvron et al. 2023, LLaMA,
Table 15: GPU-hours x 400 W x PUE 1.1; Luccioni et al. 2022 for BLOOM), an upper bound for the
GPU's own energy (measured A100 runs average about 70 % of it: Dodge et al. 2022).

Embodied: the emissions of making a device, cradle to gate (``pricing/data/embodied.csv``),
shared over its years of service as the Green Software Foundation's SCI formula does (Cloud
Carbon Footprint, EmbodiedEmissions.md): a card you buy carries the share of the years you keep
it (resold after the horizon, the rest goes with it); a rented or free machine, its board and its
share of the server, by the hour over :data:`LIFETIME_YEARS` of use; a card you already own,
none (its making is spent, whatever you do now).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

#: Hours (and what follows from them) as a number or, in the uncertainty's draws, an array.
Hours = TypeVar("Hours", float, np.ndarray)

#: Years of service over which a device's making is shared: Cloud Carbon Footprint's server
#: lifespan (SERVER_EXPECTED_LIFESPAN 35,040 h, from the Dell PowerEdge R740 life-cycle
#: assessment), Teads and CNRS EcoInfo's Ecodiag alike.
LIFETIME_YEARS = 4.0
HOURS_PER_YEAR = 8760.0  # a year of service, as Cloud Carbon Footprint counts it (35,040 h in 4)
#: A rented machine's share of its server's making, per GPU, beside the board: BLOOM's
#: 2,500 kg for an 8-GPU node without its GPUs (Luccioni et al., arXiv:2211.02001), over 8; the
#: range an estimate from 150 kg (Chien et al. 2023's per-GPU share of a p4d less its board) to
#: 625 kg (a DGX H100's bounded 5 t over 8).
SERVER_SHARE_KG, SERVER_SHARE_LOW_KG, SERVER_SHARE_HIGH_KG = 312.0, 150.0, 625.0
#: Grams in a kilogram and kilograms in a tonne (intensities are in g/kWh, prices per tonne).
G_PER_KG = 1000.0
KG_PER_T = 1000.0


def energy_kwh(board_w: float, host_w: float, wall_h: Hours, pue: float = 1.0) -> Hours:
    """Energy drawn over ``wall_h`` hours [kWh]: (board + host power) x hours x PUE."""
    return (board_w + host_w) / 1000.0 * wall_h * pue


def operational_kg(kwh: Hours, g_per_kwh: float) -> Hours:
    """Emissions of ``kwh`` at a grid's intensity [kg CO2e]."""
    return kwh * g_per_kwh / G_PER_KG


def embodied_share_kg(kg: float, years_used: float, lifetime_years: float = LIFETIME_YEARS) -> float:
    """The share of a device's making carried by ``years_used`` of its ``lifetime_years``
    (all of it past its lifetime) [kg CO2e]: a card resold after two of three years carries two
    thirds of it, its next owner the rest."""
    return kg * min(max(years_used, 0.0) / lifetime_years, 1.0)


def embodied_per_hour_kg(kg: float, lifetime_years: float = LIFETIME_YEARS) -> float:
    """A rented machine's making by the hour [kg CO2e/h], used around the clock for its life
    (a lower bound: machines idle part of the time carry more an hour)."""
    return kg / (lifetime_years * HOURS_PER_YEAR)


def kg_per_wall_hour(board_w: float, host_w: float, pue: float, g_per_kwh: float, embodied_kg_h: float = 0.0) -> float:
    """Emissions of an hour on a machine [kg CO2e/h]: its energy at its grid, plus its making by
    the hour (rented and free machines)."""
    return operational_kg(energy_kwh(board_w, host_w, 1.0, pue), g_per_kwh) + embodied_kg_h
