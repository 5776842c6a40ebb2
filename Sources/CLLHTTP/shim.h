#include <llhttp.h>
