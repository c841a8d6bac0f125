# Sales orders: creation and totals.
module Shop # def: module Shop
  MAX_ITEMS = 50 # def: constant Shop.MAX_ITEMS

  # A sales order.
  class Order < Base # def: class Shop.Order ref: Base
    attr_reader :items

    def initialize(customer, items) # def: method Shop.Order.initialize
      @customer = customer
      @items = items
    end

    def total # def: method Shop.Order.total
      items.sum(&:price) # ref: items
    end

    def self.create(customer, items) # def: method Shop.Order.create
      new(customer, items) # noref: create_sales_order is not called here
    end
  end

  def create_sales_order(customer, items) # def: function Shop.create_sales_order
    Order.create(customer, items) # ref: Order create
  end
end
