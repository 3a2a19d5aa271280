#pragma once
/*
 * --restart continues the problem the checkpoint was written for: the same
 * boundaries and, in a materials run, the same materials, zones (material
 * and source) and zone index, painted again from the configuration and
 * compared point by point. A difference is refused naming it, unless the
 * user asks for the change (--allow-problem-change).
 */
#include "io/checkpoint.h"
#include "io/config.h"

/* HEAT_OK, or HEAT_ERR_CONFIG naming the first difference and both values. */
int restart_check_problem(const char *path, const ckpt_meta *file, const heat_config *config);
