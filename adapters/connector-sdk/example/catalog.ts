// The example's bundled data: a small product catalog and a few orders. A real connector
// reads its own catalog, ERP or order database here (spec 1: the platform does not need to
// know how the connector loads its data).

/** A product of the example catalog. */
export interface Product {
  sku: string;
  name: string;
  category: ProductCategory;
  description: string;
  price_cents: number;
  currency: string;
  in_stock: boolean;
}

export const PRODUCT_CATEGORIES = ['coffee', 'equipment', 'accessories'] as const;
export type ProductCategory = (typeof PRODUCT_CATEGORIES)[number];

export const PRODUCTS: readonly Product[] = [
  { sku: 'CF-ETH-250', name: 'Ethiopia Yirgacheffe beans 250 g', category: 'coffee', description: 'Light roast, floral and citrus notes', price_cents: 1450, currency: 'EUR', in_stock: true },
  { sku: 'CF-COL-1K', name: 'Colombia Huila beans 1 kg', category: 'coffee', description: 'Medium roast, caramel and red apple', price_cents: 3900, currency: 'EUR', in_stock: true },
  { sku: 'CF-DEC-250', name: 'Swiss water decaf beans 250 g', category: 'coffee', description: 'Medium roast, cocoa, caffeine free', price_cents: 1350, currency: 'EUR', in_stock: false },
  { sku: 'EQ-GRD-01', name: 'Burr grinder', category: 'equipment', description: 'Conical steel burrs, 40 grind settings', price_cents: 12900, currency: 'EUR', in_stock: true },
  { sku: 'EQ-KTL-01', name: 'Gooseneck kettle', category: 'equipment', description: 'Temperature control, 1 litre', price_cents: 8900, currency: 'EUR', in_stock: true },
  { sku: 'EQ-DRP-02', name: 'Pour-over dripper', category: 'equipment', description: 'Ceramic cone dripper for filter coffee', price_cents: 2900, currency: 'EUR', in_stock: true },
  { sku: 'AC-FLT-100', name: 'Paper filters (100)', category: 'accessories', description: 'Unbleached filters for the pour-over dripper', price_cents: 690, currency: 'EUR', in_stock: true },
  { sku: 'AC-SCL-01', name: 'Coffee scale', category: 'accessories', description: 'Scale with timer, 0.1 g precision', price_cents: 4900, currency: 'EUR', in_stock: false },
];

/** An order of the example shop; `phone` is where the OTP for its status goes. */
export interface Order {
  order_id: string;
  status: 'processing' | 'shipped' | 'delivered' | 'delayed';
  carrier?: string;
  tracking_number?: string;
  estimated_delivery?: string;
  items: readonly { sku: string; quantity: number }[];
  total_cents: number;
  phone: string;
}

export const ORDERS: readonly Order[] = [
  { order_id: 'A-1001', status: 'shipped', carrier: 'DHL', tracking_number: 'JD0146000012345', estimated_delivery: '2026-11-25', items: [{ sku: 'EQ-GRD-01', quantity: 1 }], total_cents: 12900, phone: '+4915100001234' },
  { order_id: 'A-1002', status: 'processing', items: [{ sku: 'CF-ETH-250', quantity: 2 }, { sku: 'AC-FLT-100', quantity: 1 }], total_cents: 3590, phone: '+4915100005678' },
  { order_id: 'A-1003', status: 'delayed', carrier: 'UPS', tracking_number: '1Z999AA10123456784', estimated_delivery: '2026-12-02', items: [{ sku: 'EQ-KTL-01', quantity: 1 }], total_cents: 8900, phone: '+4915100009012' },
];

/** Products matching every word of `query` (name, description, category, SKU), best matches first. */
export function searchProducts(query: string, filters: { category?: ProductCategory; inStockOnly?: boolean } = {}): Product[] {
  const words = query.toLowerCase().split(/\s+/).filter((word) => word !== '');
  return PRODUCTS.filter((product) => {
    if (filters.category !== undefined && product.category !== filters.category) return false;
    if (filters.inStockOnly === true && !product.in_stock) return false;
    const text = `${product.sku} ${product.name} ${product.description} ${product.category}`.toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

/** The order with this id, if any. */
export function findOrder(orderId: string): Order | undefined {
  return ORDERS.find((order) => order.order_id === orderId.trim().toUpperCase());
}
