# Definitions that class-body calls make: attributes, aliases, Rails' DSL.
class Shop::Cart::Line < Base # def: class Shop.Cart.Line ref: Base
  attr_reader :sku, :qty # def: field Shop.Cart.Line.sku def: field Shop.Cart.Line.qty
  attr_accessor :note # def: field Shop.Cart.Line.note
  attr_writer "label" # noref: label is a string, not a definition
  delegate :price, :currency, to: :product # def: method Shop.Cart.Line.price def: method Shop.Cart.Line.currency
  belongs_to :product, optional: true # def: method Shop.Cart.Line.product
  has_many :discounts, dependent: :destroy # def: method Shop.Cart.Line.discounts
  scope :open, -> { where(closed: false) } # def: method Shop.Cart.Line.open ref: where

  def subtotal # def: method Shop.Cart.Line.subtotal
    qty * price # ref: qty price
  end
  alias_method :amount, :subtotal # def: method Shop.Cart.Line.amount
  alias total subtotal # def: method Shop.Cart.Line.total

  define_method(:empty?) { qty.zero? } # def: method Shop.Cart.Line.empty?
end
