/* Anchor translation unit for the transport library (keeps it non-empty while
 * parts are added). */
#include "engine/common.h"
