/* hw_memtech.h -- DRAM technologies and the energy of moving one byte to or from each.
 *
 * A const table, one row per technology (ddr4, lpddr5, hbm3, ...): the dynamic energy of a streaming
 * access, DRAM core (activation amortized over a row, read/write burst) plus its I/O, in picojoules
 * per byte, and where the figure comes from (a publication, a datasheet derivation, or an estimate
 * that says how it was made). Background and refresh power are not in it: they belong to idle_W.
 * A hwdesc memory level names its row with "technology" (docs/models.md, "Energy per action"). */
#ifndef DSE_HW_MEMTECH_H
#define DSE_HW_MEMTECH_H

#include <stddef.h>

struct hw_memtech {
    const char *name;   /* as written in hwdesc "technology" */
    double pJ_per_byte; /* access + interface energy per byte moved */
    int estimate;       /* 1: derived from another row or from supply voltages, not measured or published */
    const char *source;
};

/* The rows, in generation order; n_out gets their count. */
const struct hw_memtech *hw_memtech_table(int *n_out);
/* The row named name (exact, lower case), or NULL. */
const struct hw_memtech *hw_memtech_find(const char *name);
/* Writes "ddr3, ddr4, ..." (every name) into buf, for messages that list the known ones. */
void hw_memtech_list(char *buf, size_t n);

#endif
