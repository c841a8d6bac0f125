-- | Sales orders: creation and totals.
module Shop.Orders  -- def: module Shop.Orders
  ( Order (..)
  , createSalesOrder
  ) where

import Data.List (foldl')

-- | A line of an order.
data Item = Item  -- def: type Item
  { itemName :: String  -- def: field Item.itemName
  , itemPrice :: Int  -- def: field Item.itemPrice
  }

newtype Customer = Customer String  -- def: type Customer

data Order = Order Customer [Item]  -- def: type Order

type Total = Int  -- def: type Total

class Priced a where  -- def: interface Priced
  price :: a -> Int  -- def: method Priced.price

instance Priced Item where
  price = itemPrice  -- def: method Priced.price ref: itemPrice

-- | Create a sales order for a customer.
createSalesOrder :: Customer -> [Item] -> Order  -- def: function createSalesOrder ref: Customer Item Order
createSalesOrder customer items = Order customer items

total :: Order -> Total  -- def: function total
total (Order _ []) = 0
total (Order _ items) = foldl' (+) 0 (map price items)  -- ref: price items noref: createSalesOrder
