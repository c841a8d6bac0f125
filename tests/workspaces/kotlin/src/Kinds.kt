package shop.orders

// Definition kinds the syntax layer extracts from Kotlin: one annotated case per construct.

const val PAGE_LIMIT = 100 // def: constant PAGE_LIMIT
val defaultCurrency = "EUR" // def: field defaultCurrency
private val LOG_TAG: String = "kinds" // def: constant LOG_TAG

typealias Cents = Long // def: type Cents

/** A data class: `val`/`var` constructor parameters are properties. */
data class Money(val cents: Cents, var currency: String = defaultCurrency) { // def: class Money def: field Money.cents def: field Money.currency ref: Cents defaultCurrency
    val isZero: Boolean get() = cents == 0L // def: field Money.isZero ref: cents
    lateinit var note: String // def: field Money.note

    fun plus(other: Money): Money { // def: method Money.plus
        val sum = cents + other.cents
        return copy(cents = sum) // ref: sum
    }

    companion object {
        const val MAX_CENTS = 1_000_000L // def: constant Money.MAX_CENTS
        val ZERO = Money(0) // def: constant Money.ZERO
        fun of(cents: Long) = Money(cents) // def: method Money.of
    }
}

/** A plain constructor parameter is no property; a `val` one is. */
class Ledger(name: String, private val owner: String) { // def: class Ledger def: field Ledger.owner
    private val entries = mutableListOf<Money>() // def: field Ledger.entries

    init {
        val greeting = "ledger $name of $owner"
        println(greeting + LOG_TAG) // ref: greeting LOG_TAG
    }

    fun add(m: Money) { // def: method Ledger.add
        entries.add(m) // ref: entries
    }
}

enum class PaymentState(val code: String) { // def: enum PaymentState def: field PaymentState.code
    OPEN("o"), // def: constant PaymentState.OPEN
    PAID("p") { // def: constant PaymentState.PAID
        override fun label() = "paid" // def: method PaymentState.PAID.label
    },
    CANCELLED("c"); // def: constant PaymentState.CANCELLED

    open fun label(): String = code // def: method PaymentState.label
}

/** A sealed hierarchy: a nested data class and object. */
sealed class Payment { // def: class Payment
    data class Card(val last4: String) : Payment() // def: class Payment.Card def: field Payment.Card.last4
    object Cash : Payment() // def: class Payment.Cash
}

interface Repository<T> { // def: interface Repository
    val size: Int // def: field Repository.size
    fun find(id: Long): T? // def: method Repository.find
    fun findAll(): List<T> = emptyList() // def: method Repository.findAll
}

object Ledgers { // def: class Ledgers
    private val byOwner = mutableMapOf<String, Ledger>() // def: field Ledgers.byOwner
    fun register(owner: String) = byOwner.getOrPut(owner) { Ledger(owner, owner) } // def: method Ledgers.register
}

/** Extension functions and properties are named in their receiver type. */
fun Money.discounted(pct: Int): Money = copy(cents = cents * (100 - pct) / 100) // def: method Money.discounted
fun <T> List<T>.second(): T = this[1] // def: method List.second
fun String?.orBlank(): String = this ?: "" // def: method String.orBlank
fun <T> T.echo(): T = this // def: function echo
val Money.euros: Long get() = cents / 100 // def: field Money.euros

/** A top-level function with an anonymous object: its members are no top-level names. */
fun totalCents(ms: List<Money>): Long { // def: function totalCents
    val repo = object : Repository<Money> {
        override val size = ms.size
        override fun find(id: Long): Money? = ms.getOrNull(id.toInt()) // def: method totalCents.find
    }
    require(ms.size <= PAGE_LIMIT) { "too many items for totalCents" } // ref: PAGE_LIMIT noref: totalCents
    return ms.sumOf { it.cents } + repo.size // ref: repo
}
