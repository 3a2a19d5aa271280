/* C's templates: includes HEAT_PRECISION_FILE once with REAL = double,
 * SUFFIX = _d and once with REAL = float, SUFFIX = _f. Include it again for
 * each file (it undefines HEAT_PRECISION_FILE). */
#define REAL double
#define SUFFIX _d
#include HEAT_PRECISION_FILE
#undef REAL
#undef SUFFIX
#define REAL float
#define SUFFIX _f
#include HEAT_PRECISION_FILE
#undef REAL
#undef SUFFIX
#undef HEAT_PRECISION_FILE
