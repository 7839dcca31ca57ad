SELECT fx.cycle2(:client_id::text);
