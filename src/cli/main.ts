console.log('grantflow');
