/* hw_memtech.c -- the DRAM technology table (contract in hw_memtech.h).
 *
 * What a figure counts: E_byte = 8 x (E_burst + E_act / row_bits + E_io), pJ, for a streaming access
 * (the weights and activations dse moves are long sequential runs, so one row activation serves a
 * whole row). Where a datasheet gives the currents (the IDD values behind Micron's power
 * calculators, TN-41-01 / TN-40-07):
 *     E_burst = VDD x (IDD4R - IDD3N) / (pins x pin rate)        per bit read
 *     E_act   = VDD x (IDD0 x tRC - IDD3N x tRAS - IDD2N x tRP)   per activation
 * Rows without such data are scaled from a measured neighbour with the supply voltages of the JEDEC
 * standards (dynamic energy ~ C V^2, so E x (V_new / V_old)^2), or with a vendor's stated ratio;
 * those rows carry estimate = 1 and say so in their source. Figures are rounded to 0.1 pJ/B.
 *
 * DDR3 anchor (Horowitz's 1.3 nJ per 64-bit access) cross-checked with Micron's 2 Gb DDR3-1600 x8
 * (-125E: 1.5 V, IDD0 95, IDD2N 42, IDD3N 45, IDD4R 180 mA, tRC 47.5, tRAS 35 ns): burst
 * 1.5 x 135 mA / 12.8 Gb/s = 15.8 pJ/bit, activation 3.62 nJ / 8192-bit row = 0.44 pJ/bit, so the core
 * is 16.3 of Horowitz's 20.3 pJ/bit and I/O + termination the other 4.05. */
#include "hw_memtech.h"

#include <stdio.h>
#include <string.h>

static const struct hw_memtech table[] = {
    {"ddr3", 162.5, 0,
     "Horowitz, 'Computing's Energy Problem', ISSCC 2014: DRAM 1.3-2.6 nJ per 64-bit access (45 nm era DDR3); "
     "low end: 1300 / 8 = 162.5 pJ/B (20.3 pJ/bit). Micron 2Gb DDR3-1600 x8 currents give 16.3 pJ/bit for the "
     "core alone (src/hw_memtech.c)"},
    {"ddr4", 92.4, 1,
     "estimate, derived: Micron 4Gb DDR4-2400 x8 currents (DRAMPower memspec MICRON_4Gb_DDR4-2400_8bit_A): "
     "burst 1.2 V x (184.5 - 44.0) mA / 19.2 Gb/s = 8.78 pJ/bit, activation (1.01 nJ VDD + 0.46 nJ VPP) / 8192 "
     "bits = 0.18; I/O: DDR3's 4.05 pJ/bit x (1.2 / 1.5 V)^2 = 2.59; total 11.55 pJ/bit = 92.4 pJ/B"},
    {"ddr5", 77.7, 1,
     "estimate: ddr4 11.55 pJ/bit x (VDD 1.1 V JESD79-5 / 1.2 V JESD79-4)^2 = 9.71 pJ/bit = 77.7 pJ/B"},
    {"lpddr4", 68.3, 0,
     "derived: Micron 6Gb LPDDR4-3200 x16 channel currents (DRAMPower memspec MICRON_6Gb_LPDDR4-3200_32bit_A): "
     "burst VDD2 1.1 V x (275 - 30) mA + VDDQ 1.1 V x (150 - 0.75) mA over 16 x 3.2 Gb/s = 5.26 + 3.21 pJ/bit, "
     "activation 1.10 nJ / 16384-bit row = 0.07; total 8.54 pJ/bit = 68.3 pJ/B, the DRAM side (the SoC's PHY "
     "not counted); Accelergy's CACTI plug-in uses 8 pJ/bit"},
    {"lpddr4x", 50.3, 1,
     "estimate: lpddr4 with the I/O supply VDDQ lowered from 1.1 V to 0.6 V (JESD209-4-1): 5.26 + 0.07 + "
     "3.21 x (0.6 / 1.1)^2 = 6.28 pJ/bit = 50.3 pJ/B"},
    {"lpddr5", 44.2, 1,
     "estimate: lpddr4 scaled to JESD209-5 supplies: core (5.26 + 0.07) x (VDD2H 1.05 / 1.1 V)^2 + I/O 3.21 x "
     "(VDDQ 0.5 / 1.1 V)^2 = 4.86 + 0.66 = 5.52 pJ/bit = 44.2 pJ/B"},
    {"lpddr5x", 35.3, 1,
     "estimate: lpddr5 5.52 pJ/bit x 0.8 (Samsung LPDDR5X announcement, Nov 2021: about 20% less power than "
     "LPDDR5) = 4.42 pJ/bit = 35.3 pJ/B"},
    {"gddr5", 112.0, 0,
     "O'Connor, Chatterjee et al., 'Fine-Grained DRAM', MICRO 2017, Fig. 1: GDDR5 about 14 pJ/bit = 112 pJ/B "
     "(also Accelergy's CACTI plug-in DRAM table)"},
    {"gddr6", 90.7, 1,
     "estimate: gddr5 14 pJ/bit x (VDD 1.35 V GDDR6 JESD250 / 1.5 V GDDR5)^2 = 11.34 pJ/bit = 90.7 pJ/B"},
    {"gddr6x", 77.1, 1,
     "estimate: gddr6 11.34 pJ/bit x 0.85 (Micron GDDR6X announcement, 2020: 15% less power per bit at 21 Gb/s "
     "than GDDR6 at 14 Gb/s) = 9.64 pJ/bit = 77.1 pJ/B"},
    {"hbm2", 31.2, 0,
     "O'Connor, Chatterjee et al., 'Fine-Grained DRAM', MICRO 2017: HBM2 3.9 pJ/bit (activation, on-die data "
     "movement and I/O) = 31.2 pJ/B"},
    {"hbm2e", 31.2, 1,
     "estimate: hbm2's 3.9 pJ/bit: HBM2E (JESD235C) keeps HBM2's 1.2 V supplies and 1024-bit interface at a "
     "higher pin rate = 31.2 pJ/B"},
    {"hbm3", 26.2, 1,
     "estimate: hbm2 3.9 pJ/bit x (core VDD 1.1 V JESD238 / 1.2 V)^2 = 3.28 pJ/bit = 26.2 pJ/B; the lower I/O "
     "swing (VDDQ 0.4 V) is not credited, so an upper estimate"},
    {"hbm3e", 26.2, 1,
     "estimate: hbm3's 3.28 pJ/bit: HBM3E runs the JESD238 supplies (1.1 V core, 0.4 V I/O) at a higher pin "
     "rate = 26.2 pJ/B"},
};

const struct hw_memtech *hw_memtech_table(int *n_out)
{
    *n_out = (int)(sizeof table / sizeof table[0]);
    return table;
}

const struct hw_memtech *hw_memtech_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

void hw_memtech_list(char *buf, size_t n)
{
    size_t k = 0;
    if (!n)
        return;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof table / sizeof table[0] && k < n; i++) {
        int w = snprintf(buf + k, n - k, "%s%s", i ? ", " : "", table[i].name);
        if (w < 0)
            break;
        k += (size_t)w;
    }
}
