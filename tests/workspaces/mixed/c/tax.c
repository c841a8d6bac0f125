#include "tax.h"

int tax_for(int cents) {
    return cents / 5;
}
