#include "app/output_clock.h"

output_clock output_clock_start(double every_seconds, double now)
{
    return (output_clock){every_seconds > 0 ? every_seconds : 0, now};
}

int output_clock_due(const output_clock *c, double now, int write_in_flight)
{
    return c->every > 0 && now - c->last >= c->every && !write_in_flight;
}

void output_clock_reset(output_clock *c, double now) { c->last = now; }
