namespace Shop.Orders // def: module Shop.Orders
{
    public interface IPriced // def: interface Shop.Orders.IPriced
    {
        int Price(); // def: method Shop.Orders.IPriced.Price
    }

    /// <summary>A sales order.</summary>
    public class Order : IPriced // def: class Shop.Orders.Order ref: IPriced
    {
        public const int MaxItems = 50; // def: constant Shop.Orders.Order.MaxItems
        public const int MinItems = 1, MaxLines = 9; // def: constant Shop.Orders.Order.MinItems def: constant Shop.Orders.Order.MaxLines

        public Order(Item[] items) { Items = items; } // def: method Shop.Orders.Order.Order

        public Item[] Items { get; }

        public int Price() => Items.Length; // def: method Shop.Orders.Order.Price ref: Items
    }

    public struct Item { public int Cents; } // def: struct Shop.Orders.Item

    public enum Status { Open, Paid } // def: enum Shop.Orders.Status

    public static class Factory // def: class Shop.Orders.Factory
    {
        // Create a sales order for a customer.
        public static Order CreateSalesOrder(Item[] items) => new Order(items); // def: method Shop.Orders.Factory.CreateSalesOrder noref: Total
    }
}
