defmodule Shop.Orders do  # def: module Shop.Orders
  @moduledoc "Sales orders: creation and totals."

  @type t :: %{customer: String.t(), items: list()}  # def: type Shop.Orders.t

  @doc "Create a sales order for a customer."
  def create_sales_order(customer, items) do  # def: function Shop.Orders.create_sales_order
    order = %{customer: customer, items: items}
    validate(order)  # ref: validate order
  end

  def total(%{items: []}), do: 0  # def: function Shop.Orders.total
  def total(%{items: items}), do: Enum.sum(items)

  defp validate(order) when is_map(order), do: order  # def: function Shop.Orders.validate

  defmacro with_order(order, do: block) do  # def: function Shop.Orders.with_order
    quote do: unquote(block)  # noref: create_sales_order is not called here
  end
end

defprotocol Shop.Priced do  # def: module Shop.Priced
  def price(item)  # def: function Shop.Priced.price
end
