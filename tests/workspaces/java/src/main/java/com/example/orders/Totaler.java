package com.example.orders;

/** Anything with a total price. */
public interface Totaler { // def: interface Totaler
    long total(); // def: method Totaler.total
}
