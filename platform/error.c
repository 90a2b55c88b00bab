/* gb_strerror / gb_error_name: the tables behind include/goblin/error.h. */
#include "goblin/error.h"

const char *gb_strerror(int code)
{
    switch (code) {
#define GB_ERROR_DESC(name, value, desc) \
    case value:                          \
        return desc;
        GB_ERROR_LIST(GB_ERROR_DESC)
#undef GB_ERROR_DESC
    }
    return "unknown error";
}

const char *gb_error_name(int code)
{
    switch (code) {
#define GB_ERROR_NAME(name, value, desc) \
    case value:                          \
        return #name;
        GB_ERROR_LIST(GB_ERROR_NAME)
#undef GB_ERROR_NAME
    }
    return "GB_E?";
}
