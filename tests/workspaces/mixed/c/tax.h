#ifndef TAX_H
#define TAX_H

int tax_for(int cents);

#endif
