package shop.orders

// Definition kinds the syntax layer extracts from Scala: one annotated case per construct.

package object kinds { // def: module kinds
  val DefaultCurrency: String = "EUR" // def: field kinds.DefaultCurrency
  def cents(units: Long): Long = units * 100 // def: function kinds.cents
  type Cents = Long // def: type kinds.Cents
}

/** A case class: its parameters are fields. */
case class Money(cents: Long, currency: String = "EUR") { // def: class Money def: field Money.cents def: field Money.currency
  lazy val isZero: Boolean = cents == 0 // def: field Money.isZero ref: cents
  var note: String = "" // def: field Money.note

  def plus(other: Money): Money = { // def: method Money.plus
    val sum = cents + other.cents
    copy(cents = sum) // ref: sum
  }
}

object Money { // def: class Money
  val MAX_CENTS = 1000000L // def: constant Money.MAX_CENTS
  val Zero: Money = Money(0) // def: field Money.Zero
  implicit val ordering: Ordering[Money] = new Ordering[Money] { // def: field Money.ordering
    def compare(a: Money, b: Money): Int = a.cents.compare(b.cents) // def: method Money.ordering.compare
  }
}

/** Only `val`/`var` parameters of a plain class are fields. */
class Ledger(val owner: String, var limit: Long, label: String) { // def: class Ledger def: field Ledger.owner def: field Ledger.limit
  private var entries: List[Money] = Nil // def: field Ledger.entries
  def add(m: Money): Unit = entries = m :: entries // def: method Ledger.add ref: entries
}

trait Repository[T] { // def: trait Repository
  val name: String // def: field Repository.name
  def find(id: Long): Option[T] // def: method Repository.find
}

enum PaymentState(val code: String) { // def: enum PaymentState def: field PaymentState.code
  case Open extends PaymentState("o") // def: constant PaymentState.Open
  case Paid extends PaymentState("p") // def: constant PaymentState.Paid
  def label: String = code.toUpperCase // def: method PaymentState.label ref: code
}

enum Payment { // def: enum Payment
  case Card(last4: String) // def: constant Payment.Card
  case Cash // def: constant Payment.Cash
}

trait Show[A] { // def: trait Show
  def show(a: A): String // def: method Show.show
}

given moneyShow: Show[Money] with // def: class moneyShow
  def show(m: Money): String = s"${m.cents} ${m.currency}" // def: method moneyShow.show

given moneyOrdering: Ordering[Money] = Money.ordering // def: field moneyOrdering ref: ordering

extension (m: Money)
  def discounted(pct: Int): Money = m.copy(cents = m.cents * (100 - pct) / 100) // def: method Money.discounted
  def euros: Long = m.cents / 100 // def: method Money.euros

implicit class RichCents(val value: Long) extends AnyVal { // def: class RichCents def: field RichCents.value
  def asMoney: Money = Money(value) // def: method RichCents.asMoney
}

val pageLimit = 100 // def: field pageLimit
opaque type Sku = String // def: type Sku

def totalCents(ms: List[Money]): Long = { // def: function totalCents
  val sum = ms.map(_.cents).sum
  require(ms.size <= pageLimit, "too many items for totalCents") // ref: pageLimit noref: totalCents
  sum
}

object Headers { // def: class Headers
  val `max-age` = "max-age" // def: field Headers.max-age
}
