# categorize.py PERF_SCRIPT_OUTPUT FETCH_FRAME: each postgres sample of `perf script`
# counted once, under the first of cats its stack holds; FETCH_FRAME is fmgr_sql
# (the SQL function) or plpgsql_call_handler (migration 5).
import sys, collections, re
cats = ['ExecInsertIndexTuples','heap_lock_tuple','heap_update','heap_delete','heap_insert','index_getnext_slot','pg_plan_query','raw_parser','pg_analyze_and_rewrite_withcb','parse_analyze_fixedparams','ExecInitNode','standard_ExecutorStart','ExecEndNode','XLogFlush','CommitTransactionCommand','StartTransactionCommand',sys.argv[2],'exec_bind_message','exec_parse_message','PortalRun','PostgresMain']
samples=[]; cur=None
for line in open(sys.argv[1]):
    if line.startswith('postgres '):
        if cur is not None: samples.append(cur)
        cur=[]; continue
    m=re.match(r'\s+[0-9a-f]+ (\S+)', line)
    if m and cur is not None: cur.append(m.group(1).split('+')[0])
if cur: samples.append(cur)
tot=len(samples); c=collections.Counter(); infetch=collections.Counter(); nf=0
for names in samples:
    fetch = sys.argv[2] in names; nf+=fetch
    for k in cats:
        if k in names:
            c[k]+=1
            if fetch: infetch[k]+=1
            break
    else:
        c['other']+=1
        if fetch: infetch['other']+=1
print('samples',tot,'in fetch',nf)
for k,v in c.most_common(): print(f'{k:35s} {100*v/tot:5.1f}%  in fetch {100*infetch[k]/tot:5.1f}%')
