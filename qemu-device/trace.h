#include "trace/trace-hw_misc_trainium.h"
