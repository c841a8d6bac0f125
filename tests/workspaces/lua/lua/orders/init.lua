--- Sales orders: creation and totals.
local M = {}
local H = {}

--- Create a sales order for a customer.
M.create_sales_order = function(customer, items) -- def: method M.create_sales_order
  return H.validate({ customer = customer, items = items }) -- ref: validate customer items
end

H.validate = function(order) -- def: method H.validate
  return order
end

local function total(order) -- def: function total
  local sum = 0
  for _, item in ipairs(order.items) do
    sum = sum + item.price
  end
  return sum -- noref: create_sales_order is not called here
end

local round = function(x) return math.floor(x + 0.5) end -- def: function round

function M.total(order) -- def: method M.total
  return round(total(order)) -- ref: round total
end

function M:describe() -- def: method M.describe
  return "orders"
end

M.config = { currency = "EUR" }

return M
