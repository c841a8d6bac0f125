package com.example.orders;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.logging.Logger;

/** Definition kinds the syntax layer extracts from Java: one annotated case per construct. */
@Audited("kinds") // ref: Audited
public final class Kinds { // def: class Kinds
    public static final int PAGE_LIMIT = 100; // def: constant Kinds.PAGE_LIMIT
    private static final Logger log = Logger.getLogger("kinds"); // def: field Kinds.log
    private static int created; // def: field Kinds.created
    private final List<Item> lines = new ArrayList<>(); // def: field Kinds.lines ref: Item
    protected String label, note; // def: field Kinds.label def: field Kinds.note
    private final Function<String, Integer> parser = s -> Integer.parseInt(s.trim()); // def: field Kinds.parser

    public Kinds() { // def: method Kinds.Kinds
        created++; // ref: created
        Runnable hook = new Runnable() {
            @Override
            public void run() { // def: method Kinds.Kinds.run
                log.fine("created"); // ref: log noref: created
            }
        };
        hook.run();
    }

    public <T extends Comparable<T>> T largest(List<T> xs) { // def: method Kinds.largest
        T best = xs.get(0);
        for (T x : xs) {
            if (x.compareTo(best) > 0) {
                best = x;
            }
        }
        return best;
    }

    int parse(String text) { // def: method Kinds.parse
        return parser.apply(text) + lines.size(); // ref: parser lines
    }

    String getNote() { // def: method Kinds.getNote
        return note; // ref: note
    }

    String describe() { // def: method Kinds.describe
        return getNote(); // ref: getNote
    }

    /** A static nested class. */
    public static final class Builder { // def: class Kinds.Builder
        private String label; // def: field Kinds.Builder.label

        public Builder label(String label) { // def: method Kinds.Builder.label
            this.label = label;
            return this;
        }

        public Kinds build() { // def: method Kinds.Builder.build
            Kinds kinds = new Kinds();
            kinds.label = label;
            return kinds;
        }
    }

    /** An inner class. */
    final class Cursor { // def: class Kinds.Cursor
        int position; // def: field Kinds.Cursor.position
    }
}

/** Enum constants, one with a body of its own. */
enum OrderStatus { // def: enum OrderStatus
    OPEN("o"), // def: constant OrderStatus.OPEN
    PAID("p") { // def: constant OrderStatus.PAID
        @Override
        String label() { // def: method OrderStatus.PAID.label
            return "paid";
        }
    },
    CANCELLED("c"); // def: constant OrderStatus.CANCELLED

    private final String code; // def: field OrderStatus.code

    OrderStatus(String code) { // def: method OrderStatus.OrderStatus
        this.code = code;
    }

    String label() { // def: method OrderStatus.label
        return code; // ref: code
    }
}

/** A record: its components are fields; a compact constructor checks them. */
record Money(long cents, String currency) { // def: class Money def: field Money.cents def: field Money.currency
    static final Money ZERO = new Money(0, "EUR"); // def: constant Money.ZERO

    Money { // def: method Money.Money
        if (cents < 0) { // ref: cents
            throw new IllegalArgumentException("negative cents"); // noref: cents
        }
    }

    Money plus(Money other) { // def: method Money.plus
        return new Money(cents + other.cents, currency);
    }
}

/** An interface with a constant, an abstract, a default and a static method. */
interface Repository<T> { // def: interface Repository
    int PAGE_SIZE = 20; // def: constant Repository.PAGE_SIZE

    T find(long id); // def: method Repository.find

    default List<T> findAll() { // def: method Repository.findAll
        return List.of();
    }

    static <T> Repository<T> empty() { // def: method Repository.empty
        return id -> null;
    }
}

/** An annotation type: its elements are methods. */
@interface Audited { // def: interface Audited
    String value() default ""; // def: method Audited.value

    int level() default 1; // def: method Audited.level
}
