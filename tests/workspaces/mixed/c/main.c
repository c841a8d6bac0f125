#include <stdio.h>
#include "tax.h"

int main(void) {
    printf("%d\n", tax_for(1000));
    return 0;
}
