package com.example.orders;

/** Reports: a static function that happens to be called total (unrelated to Order.total). */
public final class Reports { // def: class Reports
    private Reports() {}

    public static long total(long[] values) { // def: method Reports.total
        long sum = 0;
        for (long v : values) {
            sum += v;
        }
        return sum;
    }
}
