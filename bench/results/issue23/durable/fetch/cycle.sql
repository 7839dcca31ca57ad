SELECT fx.cycle(:client_id::text);
